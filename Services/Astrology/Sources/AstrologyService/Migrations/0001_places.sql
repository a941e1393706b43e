-- The place gazetteer (GeoNames via scripts/gazetteer.py), loaded from PLACES_FILE on the first start.
-- `*_key` columns hold names folded to lower case without diacritics (done in Swift, the same way as queries).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE {{schema}}.places (
    id integer PRIMARY KEY,            -- the GeoNames id
    name text NOT NULL,
    name_uk text,
    country_code text NOT NULL,
    country_name text NOT NULL,
    region_code text NOT NULL,
    latitude double precision NOT NULL,
    longitude double precision NOT NULL,
    time_zone text NOT NULL,
    population integer NOT NULL,
    name_key text NOT NULL,
    uk_key text NOT NULL,
    aliases text NOT NULL              -- folded alternate names, " | "-separated
);
-- The search indexes (trigram GIN on the keys and aliases, prefix B-trees) are built by the loader after the
-- rows are in (PlaceStore.loadIfEmpty): several times faster than maintaining them row by row.
