/**
 * A duration said to exceed a limit, in seconds rounded up to a tenth: rounded to the nearest, a
 * hold just past a 0.3 s lease would read "held for 0.3 s, longer than the 0.3 s lease".
 */
export function secondsPast(ms: number): string {
  return (Math.ceil(ms / 100) / 10).toFixed(1);
}
