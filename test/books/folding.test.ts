import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { fold, indexWords, queryWords } from '../../src/books/folding.ts'

describe('folding text', () => {
  it('ignores case and accents both ways', () => {
    assert.equal(fold('García'), fold('GARCIA'))
    assert.equal(fold('GrandPré'), 'grandpre')
    assert.equal(fold('Stanisław Lem'), 'stanislaw lem')
    assert.equal(fold('Straße'), 'strasse')
    assert.equal(fold('İstanbul'), 'istanbul')
    assert.equal(fold('Ｆｕｌｌ ﬁne'), 'full fine')
    assert.equal(fold('Ørsted Æsop Œuvre'), 'orsted aesop oeuvre')
  })

  it('writes every apostrophe as the ASCII one', () => {
    assert.equal(fold('Sorcerer’s'), fold("Sorcerer's"))
  })

  it('folds printable ASCII as it folds the same text beside an accented letter', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme-ascii' }), (text) => fold(`${text}É`) === `${fold(text)}e`))
  })
})

describe('words', () => {
  it('index each part of a compound and the compound without joiners', () => {
    assert.deepEqual(indexWords(fold("Harry Potter and the Sorcerer's Stone")), [
      'harry',
      'potter',
      'and',
      'the',
      'sorcerer',
      's',
      'sorcerers',
      'stone',
    ])
    assert.deepEqual(indexWords(fold('J.K. Rowling, Mary GrandPré')), ['j', 'k', 'jk', 'rowling', 'mary', 'grandpre'])
    assert.deepEqual(indexWords(fold('The Hunger Games (The Hunger Games, #1)')), ['the', 'hunger', 'games', 'the', 'hunger', 'games', '1'])
  })

  it('are the parts of each run of joined parts, then the run without its joiners', () => {
    const part = /[\p{L}\p{N}\p{So}]+/gu
    const expected = (folded: string) =>
      [...folded.matchAll(/[\p{L}\p{N}\p{So}]+(?:['.-][\p{L}\p{N}\p{So}]+)*/gu)].flatMap(([run]) => {
        const parts = run.match(part)!
        return parts.length > 1 ? [...parts, parts.join('')] : parts
      })
    const unit = fc.constantFrom('a', 'B', 'é', '1', '📚', "'", '.', '-', ' ', ',', '(')
    fc.assert(fc.property(fc.string({ unit }), (text) => assert.deepEqual(indexWords(fold(text)), expected(fold(text)))))
  })

  it('of a query are its parts, once each, with punctuation and operators as plain text', () => {
    assert.deepEqual(queryWords('harr pott'), ['harr', 'pott'])
    assert.deepEqual(queryWords("O'Brien o'brien"), ['o', 'brien'])
    assert.deepEqual(queryWords('"a*" -b: ^(c) %_\\ NEAR OR AND NOT'), ['a', 'b', 'c', 'near', 'or', 'and', 'not'])
    assert.deepEqual(queryWords('!!!'), [])
  })

  it('keep emoji and scripts without case', () => {
    assert.deepEqual(indexWords(fold('三体 📚')), ['三体', '📚'])
  })

  it('are cut at 200 characters, never inside a character', () => {
    const [word] = indexWords('😀'.repeat(300))
    assert.equal([...word!].length, 200)
    assert.equal(word, '😀'.repeat(200))
  })
})
