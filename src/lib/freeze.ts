/** Freezes a value and everything it holds: what several users share, none of them may change for the others. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
