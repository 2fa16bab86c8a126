// The money helpers alone (no Node-only imports): the contract package's wire-amount rule.
export * from '@payment-platform/contract/money';
