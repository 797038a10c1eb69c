// Starts the shared PostgreSQL test cluster (see @bridgeworks/test-harness) and stops it at the end.
export { postgresGlobalSetup as default } from "@bridgeworks/test-harness";
