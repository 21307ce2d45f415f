/** Commander's collector of a repeatable flag: `--set a=1 --set b=2` gives `['a=1', 'b=2']`. */
export function collectRepeated(value: string, previous: string[]): string[] {
  return [...previous, value];
}
