import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/** The files linted with their types. */
const TYPED = ['src/**/*.ts', 'scripts/**/*.ts', 'docs/examples/**/*.ts', 'web/src/**/*.ts', 'web/build.ts', 'clients/*/src/**/*.ts']

/** The repository methods that change books: only the catalogue may call them (src/books/catalogue.ts). */
const BOOK_WRITES = 'create|createMany|update|delete|restore|purge'

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'data/',
      'bench/results/',
      'bench/profiles/',
      'coverage/',
      'web/dist/',
      'web/test/screenshots/',
      'clients/typescript/src/generated/',
      'clients/typescript/dist/',
      'eslint.config.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // What the service, its scripts and the page run is checked with the types; the tests, which read
  // raw answers loosely on purpose, without them, which keeps the linting of the suite quick.
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: TYPED })),
  { files: TYPED, languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } } },
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Fastify takes plugins and hooks as async functions whether or not they await anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/books/catalogue.ts', 'src/store/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `CallExpression[callee.property.name=/^(${BOOK_WRITES})$/][callee.object.property.name='books']`,
          message: 'Books change through the catalogue (src/books/catalogue.ts) only.',
        },
      ],
    },
  },
  {
    // Lower rooms never reach up: the routes and the app are built on them, not the other way round.
    files: ['src/**/*.ts'],
    ignores: ['src/routes/**', 'src/app.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/routes/*'], message: 'Nothing below the routes imports them.' }] }],
    },
  },
  {
    files: ['src/store/**/*.ts', 'src/books/**/*.ts', 'src/formats/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/routes/*', '**/http/**', '**/app.ts'], message: 'The domain, the store and the formats know nothing of HTTP.' },
          ],
        },
      ],
    },
  },
  {
    // Its types only: see src/http/status-codes.ts.
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'http'].map((name) => ({
            name,
            allowTypeImports: true,
            message: 'A value imported from node:http loads undici at start: see src/http/status-codes.ts.',
          })),
        },
      ],
    },
  },
  {
    // Tests read raw JSON answers and build test doubles, typed loosely on purpose.
    files: ['test/**/*.ts', 'web/test/**/*.ts', 'clients/**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The client runs in browsers as well as in Node.js; only the command is Node.js's alone.
    files: ['clients/typescript/src/**/*.ts'],
    ignores: ['clients/typescript/src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: 'The client runs in browsers too: only src/cli/ uses Node.js.' }] },
      ],
    },
  },
  {
    // The page runs in browsers, not in Node.js.
    files: ['web/src/**/*.ts'],
    languageOptions: { globals: globals.browser },
  },
  prettier,
)
