// Imported first by the entry point, before anything that could log: stdout belongs to the MCP protocol,
// so console output from any library goes to stderr from the very first byte.
const toStderr = (...values: unknown[]): void => console.error(...values);
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;
console.trace = toStderr;
