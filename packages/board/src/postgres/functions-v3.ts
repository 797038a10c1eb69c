import { defaultLeaseTtlMs } from "@bridgeworks/protocol";

/** The server's clock in epoch ms: every lease on a PostgreSQL board is timed by it, never by a client's. */
export const serverNowMs = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * Schema version 3: leases and fencing tokens, approvals, and the events channel a live view
 * listens to. Tables gain columns; every write function is replaced. `schema` and the channels are
 * validated identifiers, safe to splice into SQL.
 */
export function schemaV3(schema: string, claimableChannel: string, eventsChannel: string): string {
  return `
    ALTER TABLE ${schema}.board
      ADD COLUMN lease_ttl_ms bigint NOT NULL DEFAULT ${defaultLeaseTtlMs},
      ADD COLUMN agents_version bigint NOT NULL DEFAULT 0;
    ALTER TABLE ${schema}.actions
      ADD COLUMN fence integer NOT NULL DEFAULT 0,
      ADD COLUMN deciders text[],
      ADD COLUMN decision text CHECK (decision IN ('allow', 'deny')),
      ADD COLUMN decided_by text,
      DROP CONSTRAINT actions_state_check,
      ADD CONSTRAINT actions_state_check CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'decided'));
    UPDATE ${schema}.actions SET fence = 1 WHERE claimed_by IS NOT NULL;
    CREATE INDEX actions_asked ON ${schema}.actions (sender) WHERE state = 'open' AND kind = 'approval';
    ALTER TABLE ${schema}.agents
      -- The server's clock, epoch ms; NULL: no lease (a person's, or one an older bee registered).
      ADD COLUMN lease_expires_at bigint,
      ADD COLUMN host text,
      ADD COLUMN pid integer,
      DROP CONSTRAINT agents_status_check,
      ADD CONSTRAINT agents_status_check CHECK (status IN ('active', 'retired', 'departed', 'expired'));
    CREATE INDEX agents_leased ON ${schema}.agents (lease_expires_at) WHERE status = 'active';
    DROP FUNCTION ${schema}.insert_action(text, text, text, text, text, text, bigint);
    DROP FUNCTION ${schema}.claim(text, text, text, bigint);
    DROP FUNCTION ${schema}.claim_next(text, text, bigint);
    DROP FUNCTION ${schema}.complete(text, text, text, bigint);
    DROP FUNCTION ${schema}.cancel(text, text, text, text, bigint);
    DROP FUNCTION ${schema}.insert_agent(text, text, bigint);
    DROP FUNCTION ${schema}.end_agent(text, text, bigint, text);
    ${functionsV3(schema, claimableChannel, eventsChannel)}
  `;
}

/**
 * The board's writes, one function each. Each first locks the board's one row, so writers queue
 * there and positions are assigned in commit order. Each changes what it changes only if every
 * condition still holds (a compare-and-set), and answers no row when nothing changed; a change that
 * already reads as impossible answers at once, without queueing for the lock. A post or a release
 * NOTIFYs the claimable channel, any other change the events channel, each with the new head.
 */
function functionsV3(schema: string, claimable: string, events: string): string {
  const lock = `PERFORM 1 FROM ${schema}.board FOR UPDATE;`;
  const nextSeq = `(SELECT coalesce(max(seq), 0) + 1 FROM ${schema}.actions)`;
  const live = (identity: string) =>
    `EXISTS (SELECT 1 FROM ${schema}.agents AS g WHERE g.identity = ${identity} AND g.status = 'active'
       AND (g.lease_expires_at IS NULL OR g.lease_expires_at > ${serverNowMs}))`;
  const lapsedExists = `SELECT 1 FROM ${schema}.agents AS l WHERE l.status = 'active' AND l.lease_expires_at <= ${serverNowMs}`;
  const notifyEvent = (row: string) => `PERFORM pg_notify('${events}', ${row}.seq::text);`;
  // `possible`: what the change needs, read before queueing for the lock; the change checks it again.
  const actionFunction = (name: string, parameters: string, body: string, possible?: string) => `
    CREATE FUNCTION ${schema}.${name}(${parameters}) RETURNS SETOF ${schema}.actions
    LANGUAGE plpgsql AS $fn$
    DECLARE changed ${schema}.actions;
    BEGIN
      ${possible === undefined ? "" : `IF NOT EXISTS (${possible}) THEN RETURN; END IF;`}
      ${lock}
      ${body}
      IF FOUND THEN
        ${notifyEvent("changed")}
        RETURN NEXT changed;
      END IF;
    END
    $fn$;`;
  const claimFor = `SET state = 'claimed', claimed_by = p_agent, claimed_at = p_now, fence = a.fence + 1, seq = ${nextSeq}`;
  const openAction = (where: string) =>
    `SELECT 1 FROM ${schema}.actions AS q WHERE q.state = 'open' AND q.kind <> 'approval' AND ${where}`;
  return `
    -- Under the board lock: returns the identity's claims to open, each at the next position in
    -- their old order, and withdraws the approvals it asked for.
    CREATE FUNCTION ${schema}.release_locked(p_identity text, p_now bigint) RETURNS text[]
    LANGUAGE plpgsql AS $fn$
    DECLARE released text[]; released_head bigint; withdrawn_head bigint;
    BEGIN
      WITH held AS (
          SELECT h.id, row_number() OVER (ORDER BY h.seq) AS n FROM ${schema}.actions AS h
          WHERE h.state = 'claimed' AND h.claimed_by = p_identity
        ),
        base AS (SELECT coalesce(max(b.seq), 0) AS head FROM ${schema}.actions AS b),
        freed AS (
          UPDATE ${schema}.actions AS a
          SET state = 'open', claimed_by = NULL, claimed_at = NULL, seq = base.head + held.n
          FROM held, base WHERE a.id = held.id
          RETURNING a.id, a.seq
        )
      SELECT coalesce(array_agg(f.id ORDER BY f.seq), '{}'), max(f.seq) INTO released, released_head FROM freed AS f;
      IF released_head IS NOT NULL THEN
        PERFORM pg_notify('${claimable}', released_head::text);
      END IF;
      WITH asked AS (
          SELECT h.id, row_number() OVER (ORDER BY h.seq) AS n FROM ${schema}.actions AS h
          WHERE h.state = 'open' AND h.kind = 'approval' AND h.sender = p_identity
        ),
        base AS (SELECT coalesce(max(b.seq), 0) AS head FROM ${schema}.actions AS b),
        withdrawn AS (
          UPDATE ${schema}.actions AS a
          SET state = 'cancelled', cancelled_by = p_identity, closed_at = p_now, seq = base.head + asked.n,
            result = 'withdrawn: ' || p_identity || ', which asked for it, ended'
          FROM asked, base WHERE a.id = asked.id
          RETURNING a.seq
        )
      SELECT max(w.seq) INTO withdrawn_head FROM withdrawn AS w;
      IF withdrawn_head IS NOT NULL THEN
        PERFORM pg_notify('${events}', withdrawn_head::text);
      END IF;
      UPDATE ${schema}.board SET agents_version = agents_version + 1;
      PERFORM pg_notify('${events}', '');
      RETURN released;
    END
    $fn$;

    -- Under the board lock: ends every identity whose lease lapsed, in registration order.
    CREATE FUNCTION ${schema}.expire_locked(p_now bigint)
    RETURNS TABLE (expired text[], released text[])
    LANGUAGE plpgsql AS $fn$
    DECLARE lapsed text;
    BEGIN
      expired := '{}';
      released := '{}';
      FOR lapsed IN
        UPDATE ${schema}.agents AS g SET status = 'expired', ended_at = p_now
        WHERE g.status = 'active' AND g.lease_expires_at <= ${serverNowMs}
        RETURNING g.identity
      LOOP
        expired := expired || lapsed;
        released := released || ${schema}.release_locked(lapsed, p_now);
      END LOOP;
      RETURN NEXT;
    END
    $fn$;

    CREATE FUNCTION ${schema}.expire_leases(p_now bigint)
    RETURNS TABLE (expired text[], released text[])
    LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NOT EXISTS (${lapsedExists}) THEN
        expired := '{}';
        released := '{}';
        RETURN NEXT;
        RETURN;
      END IF;
      ${lock}
      RETURN QUERY SELECT * FROM ${schema}.expire_locked(p_now);
    END
    $fn$;

    CREATE FUNCTION ${schema}.insert_action(p_id text, p_kind text, p_recipient text, p_sender text,
      p_sender_agent text, p_body text, p_deciders text[], p_now bigint)
    RETURNS SETOF ${schema}.actions
    LANGUAGE plpgsql AS $fn$
    DECLARE inserted ${schema}.actions;
    BEGIN
      ${lock}
      INSERT INTO ${schema}.actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at, deciders)
      SELECT p_id, ${nextSeq}, p_kind, p_recipient, p_sender, p_sender_agent, p_body, 'open', p_now, p_deciders
      WHERE p_sender_agent IS NULL OR ${live("p_sender")}
      ON CONFLICT (id) DO NOTHING
      RETURNING * INTO inserted;
      IF FOUND THEN
        PERFORM pg_notify('${claimable}', inserted.seq::text);
        RETURN NEXT inserted;
      END IF;
    END
    $fn$;
    ${actionFunction(
      "claim",
      "p_id text, p_agent text, p_name text, p_now bigint",
      `PERFORM ${schema}.expire_locked(p_now);
      UPDATE ${schema}.actions AS a ${claimFor}
      WHERE a.id = p_id AND a.state = 'open' AND a.kind <> 'approval' AND a.recipient IN (p_name, '*')
        AND ${live("p_agent")}
      RETURNING a.* INTO changed;`,
      `${openAction("q.id = p_id")} UNION ALL ${lapsedExists}`,
    )}
    ${actionFunction(
      "claim_next",
      "p_agent text, p_name text, p_now bigint",
      // Two index probes (one per recipient), not a sort of every open action.
      `PERFORM ${schema}.expire_locked(p_now);
      UPDATE ${schema}.actions AS a ${claimFor}
      WHERE a.id = (
          SELECT oldest.id FROM (
            (SELECT o.id, o.seq FROM ${schema}.actions AS o
             WHERE o.state = 'open' AND o.recipient = p_name AND o.kind <> 'approval' ORDER BY o.seq LIMIT 1)
            UNION ALL
            (SELECT o.id, o.seq FROM ${schema}.actions AS o
             WHERE o.state = 'open' AND o.recipient = '*' AND o.kind <> 'approval' ORDER BY o.seq LIMIT 1)
          ) AS oldest
          ORDER BY oldest.seq LIMIT 1
        )
        AND a.state = 'open' AND ${live("p_agent")}
      RETURNING a.* INTO changed;`,
      `${openAction("q.recipient = p_name")} UNION ALL ${openAction("q.recipient = '*'")} UNION ALL ${lapsedExists}`,
    )}
    ${actionFunction(
      "complete",
      "p_id text, p_agent text, p_result text, p_fence integer, p_now bigint",
      `UPDATE ${schema}.actions AS a
      SET state = 'done', result = p_result, closed_at = p_now, seq = ${nextSeq}
      WHERE a.id = p_id AND a.state = 'claimed' AND a.claimed_by = p_agent
        AND (p_fence IS NULL OR a.fence = p_fence) AND ${live("p_agent")}
      RETURNING a.* INTO changed;`,
      `SELECT 1 FROM ${schema}.actions AS q WHERE q.id = p_id AND q.state = 'claimed' AND q.claimed_by = p_agent`,
    )}
    ${actionFunction(
      "cancel",
      "p_id text, p_by text, p_by_agent text, p_reason text, p_now bigint",
      `UPDATE ${schema}.actions AS a
      SET state = 'cancelled', cancelled_by = p_by, result = p_reason, closed_at = p_now, seq = ${nextSeq}
      WHERE a.id = p_id AND a.state IN ('open', 'claimed')
        AND (p_by_agent IS NULL OR (a.sender_agent = p_by_agent AND ${live("p_by")}))
      RETURNING a.* INTO changed;`,
      `SELECT 1 FROM ${schema}.actions AS q WHERE q.id = p_id AND q.state IN ('open', 'claimed')`,
    )}
    ${actionFunction(
      "decide",
      "p_id text, p_by text, p_by_name text, p_by_human boolean, p_decision text, p_reason text, p_now bigint",
      // human admits every person; an agent matches only its own name, never the word human.
      `UPDATE ${schema}.actions AS a
      SET state = 'decided', decision = p_decision, decided_by = p_by, result = p_reason, closed_at = p_now,
        seq = ${nextSeq}
      WHERE a.id = p_id AND a.kind = 'approval' AND a.state = 'open'
        AND ((p_by_human AND (p_by_name = ANY (a.deciders) OR 'human' = ANY (a.deciders)))
          OR (NOT p_by_human AND p_by_name <> 'human' AND p_by_name = ANY (a.deciders) AND ${live("p_by")}))
      RETURNING a.* INTO changed;`,
      `SELECT 1 FROM ${schema}.actions AS q WHERE q.id = p_id AND q.state = 'open' AND q.kind = 'approval'`,
    )}
    -- Registrations take the lock too, so agents.position follows commit order.
    CREATE FUNCTION ${schema}.insert_agent(p_identity text, p_name text, p_leased boolean, p_host text,
      p_pid integer, p_now bigint)
    RETURNS SETOF ${schema}.agents
    LANGUAGE plpgsql AS $fn$
    DECLARE inserted ${schema}.agents;
    BEGIN
      ${lock}
      INSERT INTO ${schema}.agents AS g (identity, name, status, registered_at, lease_expires_at, host, pid)
      VALUES (p_identity, p_name, 'active', p_now,
        CASE WHEN p_leased THEN ${serverNowMs} + (SELECT b.lease_ttl_ms FROM ${schema}.board AS b) END,
        p_host, p_pid)
      ON CONFLICT (identity) DO NOTHING
      RETURNING g.* INTO inserted;
      IF FOUND THEN
        UPDATE ${schema}.board SET agents_version = agents_version + 1;
        PERFORM pg_notify('${events}', '');
        RETURN NEXT inserted;
      END IF;
    END
    $fn$;

    -- No board lock: it changes one identity's row, and a sweep that ends it takes the row lock too.
    CREATE FUNCTION ${schema}.renew_lease(p_identity text)
    RETURNS SETOF ${schema}.agents
    LANGUAGE sql AS $fn$
      UPDATE ${schema}.agents AS g
      SET lease_expires_at = ${serverNowMs} + (SELECT b.lease_ttl_ms FROM ${schema}.board AS b)
      WHERE g.identity = p_identity AND g.status = 'active' AND g.lease_expires_at > ${serverNowMs}
      RETURNING g.*;
    $fn$;

    CREATE FUNCTION ${schema}.end_agent(p_identity text, p_status text, p_now bigint, p_successor text)
    RETURNS TABLE (agent ${schema}.agents, released text[])
    LANGUAGE plpgsql AS $fn$
    DECLARE ended ${schema}.agents;
    BEGIN
      ${lock}
      UPDATE ${schema}.agents AS g SET status = p_status, ended_at = p_now, successor = p_successor
      WHERE g.identity = p_identity AND g.status = 'active'
      RETURNING g.* INTO ended;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      released := ${schema}.release_locked(p_identity, p_now);
      agent := ended;
      RETURN NEXT;
    END
    $fn$;

    CREATE FUNCTION ${schema}.set_lease_ttl(p_ttl bigint) RETURNS bigint
    LANGUAGE sql AS $fn$
      UPDATE ${schema}.board SET lease_ttl_ms = p_ttl RETURNING lease_ttl_ms;
    $fn$;
  `;
}
