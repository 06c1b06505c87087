import { z } from "zod";
import {
  actionRegistry,
  defineTool,
  extendRegistry,
  loadWorkflowValue,
  OpenAICompatibleProvider,
  type ActionRegistry,
  type CompiledWorkflow,
  type ModelProvider,
  type NodeFunction,
} from "../../engine/index.js";
import type { ChatServer } from "./chat-server.js";

export const TEST_KEY = "sk-test-3c1f0a9b8e7d6c5b4a39";

/** Two tools that count their calls: an order lookup and a refund (which an agent may need approval for). */
export function orderTools() {
  const calls: { tool: string; args: unknown }[] = [];
  const orders: Record<string, { status: string; total: number }> = { "A-1001": { status: "delivered", total: 89 } };
  const tools = {
    lookupOrder: defineTool({
      description: "Looks an order up by its id",
      readOnly: true,
      parameters: z.object({ orderId: z.string().regex(/^[A-Z]-\d+$/) }),
      run: ({ orderId }) => {
        calls.push({ tool: "lookupOrder", args: { orderId } });
        const order = orders[orderId];
        return order ? { found: true, orderId, ...order } : { found: false, orderId };
      },
    }),
    issueRefund: defineTool({
      description: "Refunds part of an order",
      parameters: z.object({ orderId: z.string(), amount: z.number().positive().max(500) }),
      run: (args) => {
        calls.push({ tool: "issueRefund", args });
        return { refunded: args.amount, orderId: args.orderId };
      },
    }),
  };
  return { tools, calls };
}

export function serverModel(server: ChatServer, options: Partial<ConstructorParameters<typeof OpenAICompatibleProvider>[0]> = {}): ModelProvider {
  return new OpenAICompatibleProvider({ baseUrl: server.baseUrl, apiKey: TEST_KEY, model: "test-model", backoffMs: 5, ...options });
}

/** Compiles a workflow given as data, with these actions, tools and model. */
export function compileJson(
  definition: Record<string, unknown>,
  options: { actions?: Record<string, NodeFunction>; tools?: Record<string, unknown>; model?: ModelProvider },
): { workflow: CompiledWorkflow; registry: ActionRegistry } {
  const registry = extendRegistry(actionRegistry(options.actions ?? {}), {
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.model ? { model: options.model } : {}),
  });
  return { workflow: loadWorkflowValue(definition, registry), registry };
}
