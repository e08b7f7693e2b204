/**
 * A memo of a function of one text, in a small map that forgets everything when full: for values that
 * repeat from request to request (paths, model names, request bodies sent again), so that each is worked
 * out once rather than on every request, in bounded memory.
 */
export function memo<V>(size: number, make: (key: string) => V): (key: string) => V {
  let seen = new Map<string, V>();
  return (key) => {
    let v = seen.get(key);
    if (v === undefined) {
      if (seen.size >= size) seen = new Map();
      v = make(key);
      seen.set(key, v);
    }
    return v;
  };
}
