/** The first error a compiler reported, with where it points. */
export interface CompilerError {
  /** Source file as the compiler printed it, or null (e.g. `nvcc fatal`, linker errors). */
  file: string | null;
  /** 1-based line, or null. */
  line: number | null;
  /** 1-based column (gcc only), or null. */
  column: number | null;
  /** The error text after `error:`. */
  message: string;
  /** The whole line, trimmed. */
  text: string;
}

/** Identifiers of the build failures kforge recognises and explains. */
export type KnownCauseId = 'unsupported-architecture' | 'half-operators' | 'missing-header' | 'undefined-symbol' | 'undeclared-binding' | 'ninja-missing';

/** A recognised cause of a build failure, explained plainly. */
export interface KnownCause {
  id: KnownCauseId;
  /** One sentence saying what went wrong and what to do about it. */
  message: string;
}

export interface CompilerDiagnosis {
  firstError: CompilerError | null;
  knownCause: KnownCause | null;
}

export interface DiagnosisContext {
  /** CUDA version of the toolchain, e.g. `13.0`, named in the explanation where it matters. */
  cudaVersion?: string | null;
}

const ANSI_ESCAPE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');

/** Line patterns of compiler errors, tried in this order on each line. */
const ERROR_PATTERNS: Array<{ pattern: RegExp; fields: (match: RegExpExecArray) => Omit<CompilerError, 'text'> }> = [
  {
    // nvcc / EDG front end: `file.cu(12): error: …`, `file.cu(3): catastrophic error: …`
    pattern: /^(.+?)\((\d+)\): (?:catastrophic )?error(?: #[\w-]+)?: (.+)$/,
    fields: (m) => ({ file: m[1]!, line: Number(m[2]), column: null, message: m[3]! }),
  },
  {
    // gcc / clang: `file.cpp:12:5: error: …`, `file.cpp:1:10: fatal error: …`
    pattern: /^(.+?):(\d+):(\d+): (?:fatal )?error: (.+)$/,
    fields: (m) => ({ file: m[1]!, line: Number(m[2]), column: Number(m[3]), message: m[4]! }),
  },
  {
    pattern: /^(.+?):(\d+): (?:fatal )?error: (.+)$/,
    fields: (m) => ({ file: m[1]!, line: Number(m[2]), column: null, message: m[3]! }),
  },
  {
    pattern: /^nvcc fatal\s*:\s*(.+)$/,
    fields: (m) => ({ file: null, line: null, column: null, message: m[1]! }),
  },
  {
    // linker: `/usr/bin/ld: cannot find -lfoo`, `k.o:(.text+0x1): undefined reference to `f'`
    pattern: /^(?:\S*\/)?ld(?:\.\w+)?: (?!.*in function)(.+)$|^.+?: (undefined reference to .+)$/,
    fields: (m) => ({ file: null, line: null, column: null, message: (m[1] ?? m[2])! }),
  },
  {
    pattern: /(?:ImportError|OSError): (.*undefined symbol: .+)$/,
    fields: (m) => ({ file: null, line: null, column: null, message: m[1]! }),
  },
  {
    pattern: /^(?:error|fatal error|ptxas fatal|ptxas error)\s*: (.+)$/i,
    fields: (m) => ({ file: null, line: null, column: null, message: m[1]! }),
  },
];

/**
 * Finds the first error line in a compiler's output (gcc, nvcc, ninja, the linker, a failed load).
 * Colour codes are ignored. Returns null when nothing looks like an error.
 *
 * @example findFirstCompilerError("k.cu(12): error: identifier \"x\" is undefined")
 * // { file: 'k.cu', line: 12, column: null, message: 'identifier "x" is undefined', … }
 */
export function findFirstCompilerError(output: string): CompilerError | null {
  for (const rawLine of stripAnsi(output).split(/\r?\n/)) {
    const text = rawLine.trim();
    if (text.length === 0 || (/\bwarning\b/i.test(text.slice(0, 200)) && !/\berror\b/i.test(text))) continue;
    for (const { pattern, fields } of ERROR_PATTERNS) {
      const match = pattern.exec(text);
      if (match) return { ...fields(match), text };
    }
  }
  return null;
}

/** Recognises failures with a known cause and says what to do, or returns null. */
export function findKnownCause(output: string, context: DiagnosisContext = {}): KnownCause | null {
  const text = stripAnsi(output);
  const architecture = /Unsupported gpu architecture '(?:sm|compute)_(\w+)'/.exec(text);
  if (architecture) {
    const cuda = context.cudaVersion ? `this CUDA (${context.cudaVersion})` : 'this CUDA';
    return {
      id: 'unsupported-architecture',
      message: `the candidate hard-codes -arch=sm_${architecture[1]}, which ${cuda} no longer supports; remove the flag: kforge builds for the GPU's own architecture`,
    };
  }
  if (usesDisabledHalfOperators(text)) {
    return {
      id: 'half-operators',
      message:
        'PyTorch builds extensions with -D__CUDA_NO_HALF_OPERATORS__, -D__CUDA_NO_HALF_CONVERSIONS__ and -D__CUDA_NO_BFLOAT16_CONVERSIONS__, so the `*`/`+` operators and implicit float conversions of `__half`/`__nv_bfloat16` do not exist: use __hmul/__hadd/__float2half intrinsics (or __half2float and compute in float)',
    };
  }
  const header = /fatal error: ([^:\s]+): No such file or directory|cannot open source file "([^"]+)"/.exec(text);
  if (header) {
    const name = header[1] ?? header[2];
    return {
      id: 'missing-header',
      message: `the candidate includes \`${name}\`, which is not on the include path: only the C++ standard library, PyTorch's and the CUDA toolkit's headers are available; inline what it needs or use a header those provide`,
    };
  }
  const binding = /main\.cpp:\d+:\d+: error: [‘'`]?(\w+)[’'`]? was not declared in this scope/.exec(text);
  if (binding) {
    return {
      id: 'undeclared-binding',
      message: `load_inline binds every name in \`functions=[...]\` from a generated main.cpp, but \`${binding[1]}\` is not declared in cpp_sources: declare it there (e.g. \`torch::Tensor ${binding[1]}(torch::Tensor x);\`) or correct the name in \`functions\``,
    };
  }
  const symbol = /undefined symbol: (\S+)/.exec(text);
  if (symbol) {
    return {
      id: 'undefined-symbol',
      message: `the extension built but does not load: symbol \`${symbol[1]}\` is declared but never defined; give every function declared in cpp_sources or named in \`functions=[...]\` a definition, with the same signature, in the sources`,
    };
  }
  if (/Ninja is required to load C\+\+ extensions|ninja: (?:not found|command not found)/.test(text)) {
    return {
      id: 'ninja-missing',
      message:
        'PyTorch needs ninja to build extensions and it is not installed on this machine: install it (`apt-get install -y ninja-build` or `pip install ninja`); see `kforge doctor`',
    };
  }
  return null;
}

/** Both at once: the first error line and the known cause, if any. */
export function diagnoseCompilerOutput(output: string, context: DiagnosisContext = {}): CompilerDiagnosis {
  return { firstError: findFirstCompilerError(output), knownCause: findKnownCause(output, context) };
}

/** Formats a compiler error as `file:line: message` (or the message alone). */
export function formatCompilerError(error: CompilerError): string {
  if (error.file === null) return error.message;
  const place = error.line === null ? error.file : `${error.file}:${error.line}`;
  return `${place}: ${error.message}`;
}

function usesDisabledHalfOperators(text: string): boolean {
  const halfType = /__half2?|__nv_bfloat162?|\bhalf2?\b|\bc10::Half\b|\bat::Half\b/;
  const lines = text.split(/\r?\n/);
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    if (/no operator "[^"]+" matches these operands/.test(line)) {
      const following = lines.slice(index, index + 3).join('\n');
      if (/operand types? (?:are|is):/.test(following) && halfType.test(following)) return true;
    }
    if (/no suitable (?:conversion function|constructor) .*"(?:__half|__nv_bfloat16|half)"/.test(line)) return true;
    if (/more than one (?:conversion function|instance of constructor) .*"(?:__half|__nv_bfloat16)"/.test(line)) return true;
  }
  return false;
}

function stripAnsi(text: string): string {
  return text.replace(ANSI_ESCAPE, '');
}
