-- Place search moved into the service's memory (PlaceIndex; a trigram search here cost 35–80 ms per query), so
-- the search indexes the loader used to build are no longer read. The table keeps its primary key.
DROP INDEX IF EXISTS {{schema}}.places_name_trgm;
DROP INDEX IF EXISTS {{schema}}.places_uk_trgm;
DROP INDEX IF EXISTS {{schema}}.place_aliases_trgm;
DROP INDEX IF EXISTS {{schema}}.places_name_prefix;
DROP INDEX IF EXISTS {{schema}}.places_uk_prefix;
