// ESLint (flat config): the recommended JavaScript and typescript-eslint rules, plus the
// type-aware checks that catch real bugs in async code; formatting is Prettier's job.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', 'packages/extension/build/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // tsc's noUnusedLocals/noUnusedParameters already report these (with `_` for a parameter
      // kept for its position).
      '@typescript-eslint/no-unused-vars': 'off',
      // Errors rethrown with a file and line for the user: the message is the report, the
      // original stack would only be noise.
      'preserve-caught-error': 'off',
    },
  },
  {
    // Math.max(...xs) and friends pass every element as an argument: past about 100,000 (a
    // ruleset library's labels) the stack overflows, and sooner in a service worker.
    files: ['packages/*/src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Math'] > SpreadElement",
          message: 'Spread arguments overflow the stack on long arrays: reduce instead.',
        },
      ],
    },
  },
  {
    // Page event listeners are async by design; a rejection surfaces as the page's unhandled
    // rejection either way, so wrapping each in `void` would add nothing.
    files: ['packages/extension/src/ui/**/*.ts'],
    rules: {
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
    },
  },
  prettier,
);
