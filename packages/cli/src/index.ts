export {
  type BooleanOption,
  type Command,
  type CommandGroup,
  type CommandInput,
  type CommandNode,
  type CommandOutcome,
  type CommandSpec,
  commandPaths,
  defineCommand,
  defineGroup,
  type Example,
  type Failure,
  type OptionSpec,
  type OptionSpecs,
  type OptionValues,
  type PositionalSpec,
  type PositionalValues,
  type Program,
  type StringOption,
} from "./command.js";
export { completionScript, type Shell, shells } from "./completion.js";
export { renderHelp, synopsis } from "./help.js";
export { exitCodes, type ProgramOutput, rootOf, runProgram } from "./run.js";
export { UsageError } from "./usage-error.js";
export { duration, integer, keyValue } from "./values.js";
