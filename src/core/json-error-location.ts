/** ` at line L, column C` of the first JSON syntax error in `text`, or `''` where none is found. */
export function jsonErrorLocation(text: string): string {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return '';
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return ` at line ${line}, column ${column}`;
}

/** Offset of the first JSON syntax error (JSON.parse on Node 20 does not say where it is). */
export function jsonErrorOffset(text: string): number | undefined {
  const scan = new JsonScan(text);
  try {
    scan.value();
    scan.skipSpace();
    if (scan.index < text.length) scan.fail();
    return undefined;
  } catch (offset) {
    return Math.min(offset as number, text.length);
  }
}

/** A recursive-descent reading of JSON that throws the offset where the text stops being JSON. */
class JsonScan {
  index = 0;
  private readonly literal = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

  constructor(private readonly text: string) {}

  fail(): never {
    throw this.index;
  }

  skipSpace(): void {
    while (this.index < this.text.length && ' \t\n\r'.includes(this.text[this.index] as string)) this.index++;
  }

  value(): void {
    this.skipSpace();
    const char = this.text[this.index];
    if (char === '{') this.sequence('}', () => this.member());
    else if (char === '[') this.sequence(']', () => this.value());
    else if (char === '"') this.string();
    else this.literalValue();
  }

  private literalValue(): void {
    this.literal.lastIndex = this.index;
    const match = this.literal.exec(this.text);
    if (!match) this.fail();
    this.index += (match as RegExpExecArray)[0].length;
  }

  private expect(char: string): void {
    if (this.text[this.index] === char) this.index++;
    else this.fail();
  }

  private string(): void {
    this.expect('"');
    while (this.index < this.text.length && this.text[this.index] !== '"') {
      if ((this.text[this.index] as string) < ' ') this.fail();
      this.index += this.text[this.index] === '\\' ? 2 : 1;
    }
    this.expect('"');
  }

  private member(): void {
    this.skipSpace();
    this.string();
    this.skipSpace();
    this.expect(':');
    this.value();
  }

  private sequence(close: string, item: () => void): void {
    this.index++;
    this.skipSpace();
    if (this.text[this.index] === close) {
      this.index++;
      return;
    }
    for (;;) {
      item();
      this.skipSpace();
      if (this.text[this.index] !== ',') break;
      this.index++;
    }
    this.expect(close);
  }
}
