import js from '@eslint/js'
import prettier from 'eslint-config-prettier'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'bench/results/', 'bench/profiles/', 'coverage/', 'web/dist/', 'web/test/screenshots/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      // Test doubles and raw JSON answers are typed loosely on purpose, where a test reads them.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // The page runs in browsers, not in Node.js.
    files: ['web/src/**/*.ts'],
    languageOptions: { globals: globals.browser },
  },
  prettier,
)
