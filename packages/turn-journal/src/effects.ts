import {
  effectsOfEvent,
  TurnEffect,
  type TurnEvent,
  type TurnEventType,
  turnEventEffects,
} from "@bridgeworks/protocol";

/**
 * Stored as a bitmask on the turn row; the order of `TurnEffect` fixes the bits. Migrations name
 * `tool_started` as bit 2 in SQL, so these values never change.
 */
const effectBit: Readonly<Record<TurnEffect, number>> = {
  assistant_text: 1,
  tool_started: 2,
};

export function effectBitsOf(event: TurnEvent): number {
  return bitsOf(effectsOfEvent(event));
}

export function bitsOf(effects: readonly TurnEffect[]): number {
  return effects.reduce((bits, effect) => bits | effectBit[effect], 0);
}

export function effectsFromBits(bits: number): TurnEffect[] {
  return TurnEffect.options.filter((effect) => (bits & effectBit[effect]) !== 0);
}

/**
 * Every event type that can prove an effect, with the bits it proves; an event of one of these types
 * marked `effectFree` proves none.
 */
export function effectBitsByEventType(): ReadonlyMap<TurnEventType, number> {
  const entries = Object.entries(turnEventEffects) as [TurnEventType, readonly TurnEffect[]][];
  return new Map(
    entries.filter(([, effects]) => effects.length > 0).map(([type, effects]) => [type, bitsOf(effects)]),
  );
}
