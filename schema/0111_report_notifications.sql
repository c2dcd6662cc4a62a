-- Waymark reports, part 12: notifications per rule and period (see 0104 for the shared
-- conventions). Computed from the notifications table itself: it holds one row per notification
-- sent (never per sighting), so no rollup is needed. `waymark report notifications` asks for
-- hours unless --by says otherwise:
--     SELECT * FROM waymark_report_notifications('example-museum', '2026-06-01', '2026-06-02', NULL, 'hour');

CREATE FUNCTION waymark_report_notifications(p_site text, p_from timestamptz, p_to timestamptz,
                                             p_region text DEFAULT NULL, p_period text DEFAULT 'hour')
RETURNS TABLE (period_start timestamptz, rule_id text, kind text, notifications bigint, devices bigint,
               webhook_delivered bigint, webhook_pending bigint, webhook_failed bigint, mqtt_unconfirmed bigint)
LANGUAGE plpgsql STABLE SET TimeZone = 'UTC' AS $$
#variable_conflict use_column
BEGIN
    PERFORM report_check_args(p_site, p_from, p_to, p_region, p_period);
    RETURN QUERY
    SELECT date_trunc(p_period, n.at, 'UTC') AS period_start, n.rule_id, n.kind,
           count(*)::bigint,
           count(DISTINCT n.device_id)::bigint,
           count(*) FILTER (WHERE n.webhook_status = 'delivered')::bigint,
           count(*) FILTER (WHERE n.webhook_status = 'pending')::bigint,
           count(*) FILTER (WHERE n.webhook_status IN ('failed', 'dropped', 'cancelled'))::bigint,
           count(*) FILTER (WHERE n.mqtt_published_at IS NULL)::bigint
    FROM notifications n
    WHERE n.site_id = p_site
      AND n.at >= date_trunc(p_period, p_from, 'UTC') AND n.at < p_to
      AND (p_region IS NULL OR n.region_id = p_region)
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3;
END $$;
COMMENT ON FUNCTION waymark_report_notifications(text, timestamptz, timestamptz, text, text) IS 'Notifications: per period (UTC hour, day or ISO week of the evidence time) and rule, how many were sent and to how many distinct devices, and where their delivery stands: webhooks delivered, still pending (retrying), and failed (given up, dropped from a full queue, or cancelled), and MQTT publications the broker has not yet confirmed. With a region: only notifications about that region. Suppressed notifications (cool-down, quiet hours) are not sent and not counted here: see the aggregator metric waymark_aggregator_notifications_suppressed_total.';

GRANT EXECUTE ON FUNCTION waymark_report_notifications(text, timestamptz, timestamptz, text, text) TO waymark_report;
