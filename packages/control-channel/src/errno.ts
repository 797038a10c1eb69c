export function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === "string";
}

export function hasErrnoCode(error: unknown, code: string): boolean {
  return isErrnoException(error) && error.code === code;
}
