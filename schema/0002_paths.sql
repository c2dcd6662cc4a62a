-- Waymark core schema, part 2: what the fusion engine decided, per device.
-- Written by the aggregator in the same transaction as the gateway high-water marks that cover
-- the batches they came from (gateway_progress), so a re-delivered batch never adds a row; the
-- unique keys below are a second line of defence (writes use ON CONFLICT DO NOTHING).
-- Times are timestamptz of the evidence (gateway clock, corrected), never of processing.

CREATE TABLE devices (
    site_id     text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id   text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('ibeacon', 'eddystone', 'altbeacon', 'mac', 'anon')),
    first_seen  timestamptz NOT NULL,
    last_seen   timestamptz NOT NULL,
    PRIMARY KEY (site_id, device_id)
);
CREATE INDEX devices_first_seen ON devices (site_id, first_seen);
COMMENT ON TABLE devices IS 'Every tracked device ever heard at the site (new vs repeat devices: first_seen).';
COMMENT ON COLUMN devices.device_id IS 'Typed device id: ibeacon:<uuid>:<major>:<minor>, eddystone:…, altbeacon:…, mac:…, anon:<hash>. Personal data: restrict access.';
COMMENT ON COLUMN devices.kind IS 'The id''s scheme (prefix of device_id).';
COMMENT ON COLUMN devices.first_seen IS 'Earliest sighting time stored for the device.';
COMMENT ON COLUMN devices.last_seen IS 'Latest sighting time stored for the device.';

CREATE TABLE region_events (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    at           timestamptz NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('enter', 'exit', 'unknown', 'region_change')),
    region_id    text,
    proximity    text CHECK (proximity IN ('immediate', 'near', 'far', 'unknown')),
    distance_m   real
);
CREATE UNIQUE INDEX region_events_key ON region_events (site_id, device_id, at, kind, coalesce(region_id, ''));
CREATE INDEX region_events_at ON region_events (site_id, at);
COMMENT ON TABLE region_events IS 'Region state changes (enter = inside, exit = outside, unknown) and current-region changes, as published on …/events.';
COMMENT ON COLUMN region_events.at IS 'Time of the evidence that caused the change.';
COMMENT ON COLUMN region_events.kind IS 'enter, exit or unknown (region state), or region_change (the device''s current region changed).';
COMMENT ON COLUMN region_events.region_id IS 'The region; for region_change the new current region, NULL when the device is in none.';
COMMENT ON COLUMN region_events.proximity IS 'Proximity bucket at the change (state events only).';
COMMENT ON COLUMN region_events.distance_m IS 'Smoothed distance estimate in metres at the change (state events only; NULL when not heard recently).';

CREATE TABLE journeys (
    journey_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    started_at   timestamptz NOT NULL,
    ended_at     timestamptz NOT NULL,
    duration_s   double precision NOT NULL,
    regions      text[] NOT NULL,
    UNIQUE (site_id, device_id, started_at)
);
CREATE INDEX journeys_started ON journeys (site_id, started_at);
COMMENT ON TABLE journeys IS 'A device''s ordered visits from its first entry until it was outside every region for journey_timeout (DESIGN.md §3). Written when the journey ends.';
COMMENT ON COLUMN journeys.journey_id IS 'Surrogate key, referenced by visits.journey_id.';
COMMENT ON COLUMN journeys.started_at IS 'Entry into the first region.';
COMMENT ON COLUMN journeys.ended_at IS 'Exit from the last region (before the timeout that closed the journey).';
COMMENT ON COLUMN journeys.duration_s IS 'ended_at - started_at in seconds.';
COMMENT ON COLUMN journeys.regions IS 'Region ids in visit order, consecutive repeats collapsed (top paths report).';

CREATE TABLE visits (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    region_id    text NOT NULL,
    entered_at   timestamptz NOT NULL,
    exited_at    timestamptz NOT NULL,
    dwell_s      double precision NOT NULL,
    inferred     boolean NOT NULL DEFAULT false,
    journey_id   bigint REFERENCES journeys ON DELETE SET NULL,
    PRIMARY KEY (site_id, device_id, region_id, entered_at)
);
CREATE INDEX visits_entered ON visits (site_id, entered_at);
CREATE INDEX visits_region_entered ON visits (site_id, region_id, entered_at);
CREATE INDEX visits_open_journey ON visits (site_id, device_id, entered_at) WHERE journey_id IS NULL;
COMMENT ON TABLE visits IS 'A device''s stay in one region: one row per completed visit (DESIGN.md §3).';
COMMENT ON COLUMN visits.entered_at IS 'When the device became the region''s current occupant.';
COMMENT ON COLUMN visits.exited_at IS 'When it left (moved to another region or exited).';
COMMENT ON COLUMN visits.dwell_s IS 'exited_at - entered_at in seconds.';
COMMENT ON COLUMN visits.inferred IS 'True for regions on the shortest path between two non-adjacent regions the device jumped between (not observed directly).';
COMMENT ON COLUMN visits.journey_id IS 'The journey the visit belongs to; NULL while that journey is still open (set when it ends).';

CREATE TABLE transitions (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    device_id    text NOT NULL,
    from_region  text NOT NULL,
    to_region    text NOT NULL,
    at           timestamptz NOT NULL,
    inferred     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (site_id, device_id, at, from_region, to_region)
);
CREATE INDEX transitions_at ON transitions (site_id, at);
COMMENT ON TABLE transitions IS 'A device moving from one region to the next (transition matrix, traffic patterns); one row per step of an inferred path.';
COMMENT ON COLUMN transitions.from_region IS 'Region left.';
COMMENT ON COLUMN transitions.to_region IS 'Region entered.';
COMMENT ON COLUMN transitions.at IS 'Time of the evidence for the move.';
COMMENT ON COLUMN transitions.inferred IS 'True when the step lies on an inferred path (the device was not seen in between).';
