-- Waymark core schema, part 1: the venue as described by the site file.
-- The aggregator upserts these rows from the site file at every start, so they always match the
-- configuration it runs with; reports join on them for names, positions and iBeacon identities.

CREATE TABLE sites (
    site_id     text PRIMARY KEY,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE sites IS 'One row per venue (site file). Every other table is keyed by site_id so one database can hold several venues.';
COMMENT ON COLUMN sites.site_id IS 'The site file''s id; also the MQTT topic level in waymark/v1/<site>.';
COMMENT ON COLUMN sites.updated_at IS 'When an aggregator last synchronised this site''s gateways, regions and edges from its site file.';

CREATE TABLE gateways (
    site_id         text NOT NULL REFERENCES sites ON DELETE CASCADE,
    gateway_id      text NOT NULL,
    x_m             double precision NOT NULL,
    y_m             double precision NOT NULL,
    floor           integer NOT NULL DEFAULT 0,
    rssi_offset_db  double precision NOT NULL DEFAULT 0,
    in_site_file    boolean NOT NULL DEFAULT true,
    PRIMARY KEY (site_id, gateway_id)
);
COMMENT ON TABLE gateways IS 'Receivers (Raspberry Pis running waymark-edge) from the site file.';
COMMENT ON COLUMN gateways.gateway_id IS 'Gateway id; the MQTT topic level in …/gateways/<gw>/….';
COMMENT ON COLUMN gateways.x_m IS 'Position in metres in the site plane (x).';
COMMENT ON COLUMN gateways.y_m IS 'Position in metres in the site plane (y).';
COMMENT ON COLUMN gateways.floor IS 'Storey; positions on different floors are not comparable.';
COMMENT ON COLUMN gateways.rssi_offset_db IS 'Added to every RSSI this gateway reports (antenna/enclosure correction), dB.';
COMMENT ON COLUMN gateways.in_site_file IS 'False once the gateway was removed from the site file; its history is kept.';

CREATE TABLE regions (
    site_id        text NOT NULL REFERENCES sites ON DELETE CASCADE,
    region_id      text NOT NULL,
    name           text NOT NULL,
    x_m            double precision NOT NULL,
    y_m            double precision NOT NULL,
    floor          integer NOT NULL DEFAULT 0,
    radius_m       double precision NOT NULL,
    is_entrance    boolean NOT NULL DEFAULT false,
    gateway_ids    text[] NOT NULL,
    ibeacon_uuid   uuid,
    ibeacon_major  integer CHECK (ibeacon_major BETWEEN 0 AND 65535),
    ibeacon_minor  integer CHECK (ibeacon_minor BETWEEN 0 AND 65535),
    in_site_file   boolean NOT NULL DEFAULT true,
    PRIMARY KEY (site_id, region_id)
);
COMMENT ON TABLE regions IS 'Regions (the area around one beacon position, like a CLBeaconRegion) from the site file.';
COMMENT ON COLUMN regions.region_id IS 'Region id from the site file; what visits, transitions and events refer to.';
COMMENT ON COLUMN regions.name IS 'Human-readable name for reports.';
COMMENT ON COLUMN regions.x_m IS 'Position in metres (explicit, or the mean of its gateways).';
COMMENT ON COLUMN regions.y_m IS 'Position in metres (explicit, or the mean of its gateways).';
COMMENT ON COLUMN regions.floor IS 'Storey of the region.';
COMMENT ON COLUMN regions.radius_m IS 'A device within this estimated distance of the region''s gateway is inside.';
COMMENT ON COLUMN regions.is_entrance IS 'Devices enter and leave the venue here (entrance capture report).';
COMMENT ON COLUMN regions.gateway_ids IS 'Gateways anchored at this region.';
COMMENT ON COLUMN regions.ibeacon_uuid IS 'iBeacon proximity UUID a phone app monitors for this region, if any.';
COMMENT ON COLUMN regions.ibeacon_major IS 'iBeacon major of the region identity (NULL: any).';
COMMENT ON COLUMN regions.ibeacon_minor IS 'iBeacon minor of the region identity (NULL: any).';
COMMENT ON COLUMN regions.in_site_file IS 'False once the region was removed from the site file; its history is kept.';

CREATE TABLE region_edges (
    site_id      text NOT NULL REFERENCES sites ON DELETE CASCADE,
    from_region  text NOT NULL,
    to_region    text NOT NULL,
    length_m     double precision NOT NULL,
    PRIMARY KEY (site_id, from_region, to_region)
);
COMMENT ON TABLE region_edges IS 'Beacon graph: regions a person can walk between directly (undirected; stored as written in the site file).';
COMMENT ON COLUMN region_edges.from_region IS 'One end of the edge (regions.region_id).';
COMMENT ON COLUMN region_edges.to_region IS 'The other end of the edge (regions.region_id).';
COMMENT ON COLUMN region_edges.length_m IS 'Walking length in metres (explicit, or the straight distance between the regions).';
