import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { UnderWay, type UnderWayEntry } from '../../../src/http/wire/under-way.ts'

const values = (list: UnderWay<string>) => [...list.entries()].map((entry) => entry.value)

describe('what the requests under way hold', () => {
  it('comes newest first, without what was deleted, wherever it stood', () => {
    const list = new UnderWay<string>()
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map<UnderWayEntry<string>>((value) => list.add(value))
    assert.deepEqual(values(list), ['d', 'c', 'b', 'a'])
    list.delete(b!)
    assert.deepEqual(values(list), ['d', 'c', 'a'])
    list.delete(d!)
    list.delete(a!)
    assert.deepEqual(values(list), ['c'])
    list.delete(c!)
    assert.deepEqual(values(list), [])
    list.add('e')
    assert.deepEqual(values(list), ['e'])
  })

  it('ignores an entry deleted twice', () => {
    const list = new UnderWay<string>()
    const a = list.add('a')
    list.add('b')
    list.delete(a)
    list.delete(a)
    assert.deepEqual(values(list), ['b'])
  })

  it('goes on past an entry deleted while it is being read', () => {
    const list = new UnderWay<string>()
    for (const value of ['a', 'b', 'c']) list.add(value)
    const seen: string[] = []
    for (const entry of list.entries()) {
      seen.push(entry.value!)
      if (entry.value === 'b') list.delete(entry)
    }
    assert.deepEqual(seen, ['c', 'b', 'a'])
    assert.deepEqual(values(list), ['c', 'a'])
  })
})
