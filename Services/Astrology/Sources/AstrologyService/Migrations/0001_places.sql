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
    uk_key text NOT NULL
);

-- Other spellings (Kiev, Kijów, Lvov…), one row each so trigram similarity compares whole, short names.
CREATE TABLE {{schema}}.place_aliases (
    place_id integer NOT NULL REFERENCES {{schema}}.places (id) ON DELETE CASCADE,
    alias_key text NOT NULL,
    PRIMARY KEY (place_id, alias_key)
);
-- The search indexes (trigram GIN on the keys and alias keys, prefix B-trees) are built by the loader after the
-- rows are in (PlaceStore.loadIfEmpty): several times faster than maintaining them row by row.
