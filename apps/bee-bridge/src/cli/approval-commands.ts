import { defineCommand } from "@bridgeworks/cli";
import { ActionId, ActionResult, type ApprovalDecision, HumanSender } from "@bridgeworks/protocol";
import { retryWhileBusy } from "../board-access.js";
import { boardOptions, parseValue, withBoard } from "./board-options.js";
import type { BeeContext } from "./context.js";

const command = defineCommand<BeeContext>();

/** Who a person deciding from this terminal is: `human:<login>` when the login is a valid name, else `human`. */
export function defaultDecider(env: Readonly<Record<string, string | undefined>>): string {
  const login = env.USER ?? env.LOGNAME;
  const candidate = login === undefined ? "human" : `human:${login}`;
  return HumanSender.safeParse(candidate).success ? candidate : "human";
}

function decisionCommand(decision: ApprovalDecision) {
  const verb = decision === "allow" ? "approve" : "deny";
  return command({
    name: verb,
    summary: `${verb} a permission request (an approval) once; exit 1 when it was already decided`,
    positionals: [{ name: "id", summary: "the approval's id (bee watch and bee list show it)" }],
    options: {
      by: {
        type: "string",
        placeholder: "human[:NAME]",
        summary: "who decides (default human:$USER); the approval's deciders must name them",
      },
      reason: { type: "string", placeholder: "TEXT", summary: "why, for the agent that asked" },
      ...boardOptions,
    },
    examples: [
      {
        command: `bee ${verb} act_0123456789abcdef --reason "${decision === "allow" ? "build is generated" : "not on main"}"`,
        summary: `${verb} as human:$USER`,
      },
    ],
    async run({ args, options }, context) {
      const id = parseValue(ActionId, args.id, "<id>");
      const by = parseValue(HumanSender, options.by ?? defaultDecider(context.env), "--by");
      const reason =
        options.reason === undefined ? undefined : parseValue(ActionResult, options.reason, "--reason");
      const outcome = await withBoard(context, options.board, (board) =>
        retryWhileBusy(() => board.decide(by, id, decision, reason), { withinMs: 5000 }),
      );
      if (options.json) {
        context.stdout(`${JSON.stringify(outcome)}\n`);
      } else {
        const record = outcome.record;
        const how = record.decision === "allow" ? "allowed" : "denied";
        context.stdout(
          outcome.outcome === "decided"
            ? `${how} ${id} as ${record.decidedBy}\n`
            : `already_decided: ${id} was ${how} by ${record.decidedBy} at ${record.closedAt}\n`,
        );
      }
      return outcome.outcome === "decided" ? 0 : 1;
    },
  });
}

export const approveCommand = decisionCommand("allow");
export const denyCommand = decisionCommand("deny");
