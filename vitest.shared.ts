import { defaultServerConditions } from "vite";
import { defineProject, type UserWorkspaceConfig } from "vitest/config";

// Workspace packages resolve to their TypeScript sources through this export condition,
// so tests run without building the packages they import.
export const sourceCondition = "@bridgeworks/source";

export function bridgeworksProject(
  name: string,
  test: UserWorkspaceConfig["test"] = {},
): UserWorkspaceConfig {
  return defineProject({
    resolve: { conditions: [sourceCondition, ...defaultServerConditions] },
    ssr: { resolve: { conditions: [sourceCondition, ...defaultServerConditions] } },
    test: { name, include: ["src/**/*.test.ts", "test/**/*.test.ts"], ...test },
  });
}
