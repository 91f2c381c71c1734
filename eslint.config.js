// ESLint flat config: typescript-eslint's type-aware rules over every source folder.
// The import boundaries of docs/architecture.md are enforced by test/unit/boundaries.test.ts, which also
// runs under `npm run lint:boundaries`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'images/ramdisk/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      'max-lines': ['error', { max: 800, skipBlankLines: true, skipComments: true }],
      'no-restricted-syntax': ['error', {
        selector: "MemberExpression[object.name='process'][property.name=/^(argv|exit)$/]",
        message: 'Only agent/main.ts and agent/cli.ts read argv or exit (docs/architecture.md, rule 4).',
      }],
    },
  },
  {
    files: ['agent/main.ts', 'agent/cli.ts', 'agent/cli/**/*.ts', 'test/**/*.ts', 'scripts/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] }] }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
  },
);
