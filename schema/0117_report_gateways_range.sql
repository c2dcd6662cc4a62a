-- Waymark reports, part 18: the gateways report reads the status history of its range only.
--
-- waymark_report_gateways (0106) read every status of the site received before the end of the
-- range, three times: a window over all of them for the online time, a sort of all of them for
-- the latest status, and a grouping for the last online one and the largest spool depth. Its cost
-- grew with the whole history (0.43-0.59 s for a month of statuses of 20 gateways every 5 minutes;
-- docs/reports.md "Speed"). The figures need less:
--
--   online time   the status in force when the range starts (the last one before it: one step
--                 back in gateway_status_key) and the statuses received in the range, read per
--                 gateway in the order of that index, so the "until the next status" window needs
--                 no sort;
--   state, last online status
--                 one backward step of the key index per gateway;
--   spool drops   per boot seen in the range, its largest drop counter before the range: a range of
--                 the new index gateway_status_boot (it was a grouping of all earlier statuses).
--
-- The results are the same as 0106's, row for row (ReportSQLTests compares both over many ranges):
-- the same statuses, in the same order, feed the same expressions (online seconds are summed as
-- numeric, as before, then converted). Cost: the statuses received in the range, plus a few index
-- steps per gateway and boot. No rollup is needed: the statuses of a month are 8,640 per gateway.

CREATE INDEX gateway_status_boot ON gateway_status (site_id, gateway_id, boot, received_at) INCLUDE (spool_dropped)
    WHERE boot IS NOT NULL;
COMMENT ON INDEX gateway_status_boot IS 'Gateways report (schema 0117): the largest drop counter of a boot before a range.';

CREATE OR REPLACE FUNCTION waymark_report_gateways(p_site text, p_from timestamptz, p_to timestamptz,
                                        p_region text DEFAULT NULL, p_period text DEFAULT 'day')
RETURNS TABLE (gateway_id text, state text, last_seen timestamptz, online_s double precision,
               online_share double precision, batches bigint, sightings bigint, rejected bigint,
               spool_dropped bigint, spool_depth_last integer, spool_depth_max integer)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
DECLARE
    stop timestamptz := least(p_to, now());
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    WITH gw AS (
        SELECT g.gateway_id FROM gateways g
        WHERE g.site_id = p_site
          AND (p_region IS NULL OR g.gateway_id IN (
                SELECT unnest(r.gateway_ids) FROM regions r WHERE r.site_id = p_site AND r.region_id = p_region))
    ), ranged AS (
        -- Each status holds until the next one (or the end of the range). Per gateway: the status in
        -- force when the range starts (the last one before it) until the first status of the range,
        -- then the statuses of the range in the order of the key index, so no sort.
        SELECT gw.gateway_id,
               coalesce(CASE WHEN p.state = 'online' AND least(coalesce(q.first_at, stop), stop) > p_from
                             THEN extract(epoch FROM least(coalesce(q.first_at, stop), stop) - p_from) END, 0)
               + coalesce(q.secs, 0) AS secs,
               q.depth_max
        FROM gw
        LEFT JOIN LATERAL (
            SELECT s.state FROM gateway_status s
            WHERE s.site_id = p_site AND s.gateway_id = gw.gateway_id AND s.received_at < least(p_from, stop)
            ORDER BY s.received_at DESC, s.state DESC LIMIT 1) p ON true
        LEFT JOIN LATERAL (
            SELECT min(x.received_at) AS first_at, max(x.spool_depth) AS depth_max,
                   sum(extract(epoch FROM least(coalesce(x.next_at, stop), stop) - x.received_at))
                       FILTER (WHERE x.state = 'online' AND x.received_at < stop) AS secs
            FROM (SELECT s.received_at, s.state, s.spool_depth,
                         lead(s.received_at) OVER (ORDER BY s.received_at, s.state) AS next_at
                  FROM gateway_status s
                  WHERE s.site_id = p_site AND s.gateway_id = gw.gateway_id AND s.received_at >= p_from AND s.received_at < p_to) x
            ) q ON true
    ), latest AS (
        -- The latest status, and the latest online one, received before the end of the range:
        -- one backward step of the key index each.
        SELECT gw.gateway_id, l.state, l.spool_depth, o.at
        FROM gw
        LEFT JOIN LATERAL (
            SELECT s.state, s.spool_depth FROM gateway_status s
            WHERE s.site_id = p_site AND s.gateway_id = gw.gateway_id AND s.received_at < p_to
            ORDER BY s.received_at DESC, s.state DESC LIMIT 1) l ON true
        LEFT JOIN LATERAL (
            SELECT s.received_at AS at FROM gateway_status s
            WHERE s.site_id = p_site AND s.gateway_id = gw.gateway_id AND s.received_at < p_to AND s.state = 'online'
            ORDER BY s.received_at DESC LIMIT 1) o ON true
    ), drops AS (
        -- Per boot seen in the range, the growth of its drop counter: its largest value in the
        -- range minus its largest before (gateway_status_boot).
        SELECT i.gateway_id, sum(i.m - coalesce(b.m, 0))::bigint AS n
        FROM (SELECT s.gateway_id, s.boot, max(s.spool_dropped) AS m FROM gateway_status s
              WHERE s.site_id = p_site AND s.received_at >= p_from AND s.received_at < p_to AND s.boot IS NOT NULL
              GROUP BY 1, 2) i
        LEFT JOIN LATERAL (
            SELECT max(s.spool_dropped) AS m FROM gateway_status s
            WHERE s.site_id = p_site AND s.gateway_id = i.gateway_id AND s.boot = i.boot AND s.received_at < p_from) b ON true
        GROUP BY i.gateway_id
    ), ingest AS (
        SELECT h.gateway_id, sum(h.batches)::bigint AS batches, sum(h.sightings)::bigint AS sightings
        FROM gateway_ingest_hourly h
        WHERE h.site_id = p_site AND h.hour >= date_trunc('hour', p_from, 'UTC') AND h.hour < p_to
        GROUP BY h.gateway_id
    ), last_batch AS (
        SELECT h.gateway_id, max(h.last_batch_at) AS at FROM gateway_ingest_hourly h
        WHERE h.site_id = p_site AND h.hour < p_to GROUP BY h.gateway_id
    ), rejected AS (
        SELECT j.gateway_id, sum(j.count)::bigint AS n FROM gateway_rejections j
        WHERE j.site_id = p_site AND j.hour >= date_trunc('hour', p_from, 'UTC') AND j.hour < p_to
        GROUP BY j.gateway_id
    )
    SELECT gw.gateway_id, coalesce(l.state, 'unknown'),
           CASE WHEN lb.at IS NULL THEN l.at WHEN l.at IS NULL THEN lb.at ELSE greatest(lb.at, l.at) END,
           o.secs::double precision,
           CASE WHEN stop > p_from THEN o.secs::double precision / extract(epoch FROM stop - p_from)::double precision END,
           coalesce(i.batches, 0), coalesce(i.sightings, 0), coalesce(r.n, 0), coalesce(d.n, 0),
           l.spool_depth, o.depth_max
    FROM gw
    LEFT JOIN ranged o ON o.gateway_id = gw.gateway_id
    LEFT JOIN latest l ON l.gateway_id = gw.gateway_id
    LEFT JOIN drops d ON d.gateway_id = gw.gateway_id
    LEFT JOIN ingest i ON i.gateway_id = gw.gateway_id
    LEFT JOIN last_batch lb ON lb.gateway_id = gw.gateway_id
    LEFT JOIN rejected r ON r.gateway_id = gw.gateway_id
    ORDER BY gw.gateway_id;
END $$;
COMMENT ON FUNCTION waymark_report_gateways(text, timestamptz, timestamptz, text, text) IS 'Gateway health for the site''s gateways (or those of one region) over the range: latest status (online/offline/unknown), last seen (latest batch or online status received up to the end of the range), seconds online (status history: each status holds until the next; the range ends at now() at the latest) and its share of the range, batches and sightings stored, batches the aggregator rejected, batches the gateway dropped from a full spool (growth of the per-boot counter within the range), and the latest and largest spool depth. Reads the statuses of the range and a few index entries per gateway (schema 0117).';
