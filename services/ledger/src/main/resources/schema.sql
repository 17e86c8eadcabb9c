-- The ledger's table; the event id is ingest's, so a replayed record is stored once.
CREATE TABLE IF NOT EXISTS events (
    id          uuid PRIMARY KEY,
    type        text NOT NULL,
    source      text NOT NULL,
    payload     jsonb NOT NULL,
    received_at timestamptz NOT NULL,
    stored_at   timestamptz NOT NULL DEFAULT now()
);
