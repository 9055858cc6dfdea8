/** API paths the tests use again and again. */

/** A namespace's pods collection. */
export const podsPath = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
