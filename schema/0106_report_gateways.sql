-- Waymark reports, part 7: gateway health (see 0104 for the shared conventions).

CREATE FUNCTION waymark_report_gateways(p_site text, p_from timestamptz, p_to timestamptz,
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
    ), st AS (
        SELECT s.gateway_id, s.received_at, s.state,
               lead(s.received_at) OVER (PARTITION BY s.gateway_id ORDER BY s.received_at, s.state) AS next_at
        FROM gateway_status s WHERE s.site_id = p_site AND s.received_at < stop
    ), online AS (
        SELECT st.gateway_id,
               sum(extract(epoch FROM least(coalesce(st.next_at, stop), stop) - greatest(st.received_at, p_from)))::double precision AS secs
        FROM st
        WHERE st.state = 'online' AND coalesce(st.next_at, stop) > p_from
        GROUP BY st.gateway_id
    ), latest AS (
        SELECT DISTINCT ON (s.gateway_id) s.gateway_id, s.state, s.spool_depth
        FROM gateway_status s WHERE s.site_id = p_site AND s.received_at < p_to
        ORDER BY s.gateway_id, s.received_at DESC, s.state DESC
    ), heard AS (
        SELECT s.gateway_id, max(s.received_at) FILTER (WHERE s.state = 'online') AS at,
               max(s.spool_depth) FILTER (WHERE s.received_at >= p_from) AS depth_max
        FROM gateway_status s WHERE s.site_id = p_site AND s.received_at < p_to
        GROUP BY s.gateway_id
    ), drops AS (
        SELECT i.gateway_id, sum(i.m - coalesce(b.m, 0))::bigint AS n
        FROM (SELECT s.gateway_id, s.boot, max(s.spool_dropped) AS m FROM gateway_status s
              WHERE s.site_id = p_site AND s.received_at >= p_from AND s.received_at < p_to AND s.boot IS NOT NULL
              GROUP BY 1, 2) i
        LEFT JOIN (SELECT s.gateway_id, s.boot, max(s.spool_dropped) AS m FROM gateway_status s
                   WHERE s.site_id = p_site AND s.received_at < p_from AND s.boot IS NOT NULL
                   GROUP BY 1, 2) b ON b.gateway_id = i.gateway_id AND b.boot = i.boot
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
           CASE WHEN lb.at IS NULL THEN h.at WHEN h.at IS NULL THEN lb.at ELSE greatest(lb.at, h.at) END,
           coalesce(o.secs, 0),
           CASE WHEN stop > p_from THEN coalesce(o.secs, 0) / extract(epoch FROM stop - p_from)::double precision END,
           coalesce(i.batches, 0), coalesce(i.sightings, 0), coalesce(r.n, 0), coalesce(d.n, 0),
           l.spool_depth, h.depth_max
    FROM gw
    LEFT JOIN online o ON o.gateway_id = gw.gateway_id
    LEFT JOIN latest l ON l.gateway_id = gw.gateway_id
    LEFT JOIN heard h ON h.gateway_id = gw.gateway_id
    LEFT JOIN drops d ON d.gateway_id = gw.gateway_id
    LEFT JOIN ingest i ON i.gateway_id = gw.gateway_id
    LEFT JOIN last_batch lb ON lb.gateway_id = gw.gateway_id
    LEFT JOIN rejected r ON r.gateway_id = gw.gateway_id
    ORDER BY gw.gateway_id;
END $$;
COMMENT ON FUNCTION waymark_report_gateways(text, timestamptz, timestamptz, text, text) IS 'Gateway health for the site''s gateways (or those of one region) over the range: latest status (online/offline/unknown), last seen (latest batch or online status received up to the end of the range), seconds online (status history: each status holds until the next; the range ends at now() at the latest) and its share of the range, batches and sightings stored, batches the aggregator rejected, batches the gateway dropped from a full spool (growth of the per-boot counter within the range), and the latest and largest spool depth.';
