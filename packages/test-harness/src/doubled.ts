import { type ModelDouble, type ScriptInput, startModelDouble } from "@bridgeworks/model-double";
import {
  createIsolatedEnvironment,
  type IsolatedEnvironment,
  type IsolatedEnvironmentOptions,
} from "./environment.js";

export interface DoubledEnvironment {
  double: ModelDouble;
  environment: IsolatedEnvironment;
}

export interface DoubledEnvironments {
  /** Starts a model double on `script` and an isolated environment whose clients talk to it. */
  start(
    script: ScriptInput,
    options?: Omit<IsolatedEnvironmentOptions, "modelUrl">,
  ): Promise<DoubledEnvironment>;
  /** Ends every environment started (their process groups, their dirs), then every double. */
  dispose(): Promise<void>;
}

/** What most end-to-end tests begin with; call `dispose()` after each test. */
export function doubledEnvironments(): DoubledEnvironments {
  const started: DoubledEnvironment[] = [];
  return {
    async start(script, options = {}) {
      const double = await startModelDouble(script);
      try {
        const environment = createIsolatedEnvironment({ modelUrl: double.url, ...options });
        started.push({ double, environment });
        return { double, environment };
      } catch (error) {
        await double.close();
        throw error;
      }
    },
    async dispose() {
      for (const { double, environment } of started.splice(0).reverse()) {
        await environment.dispose();
        await double.close();
      }
    },
  };
}
