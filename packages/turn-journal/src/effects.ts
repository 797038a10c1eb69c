import { TurnEffect, type TurnEvent, type TurnEventType, turnEventEffects } from "@bridgeworks/protocol";

/** Stored as a bitmask on the turn row; the order of `TurnEffect` fixes the bits. */
const effectBit: Readonly<Record<TurnEffect, number>> = {
  assistant_text: 1,
  tool_started: 2,
};

export function effectBitsOf(event: TurnEvent): number {
  return bitsOf(turnEventEffects[event.type]);
}

export function bitsOf(effects: readonly TurnEffect[]): number {
  return effects.reduce((bits, effect) => bits | effectBit[effect], 0);
}

export function effectsFromBits(bits: number): TurnEffect[] {
  return TurnEffect.options.filter((effect) => (bits & effectBit[effect]) !== 0);
}

/** Every event type that proves at least one effect, with the bits it proves. */
export function effectBitsByEventType(): ReadonlyMap<TurnEventType, number> {
  const entries = Object.entries(turnEventEffects) as [TurnEventType, readonly TurnEffect[]][];
  return new Map(
    entries.filter(([, effects]) => effects.length > 0).map(([type, effects]) => [type, bitsOf(effects)]),
  );
}
