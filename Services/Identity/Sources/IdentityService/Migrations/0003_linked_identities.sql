-- Linking (POST /v1/auth/link/google, /v1/auth/link/apple) adds Google and Apple credentials to existing accounts:
-- an account holds at most one identity of each provider, so concurrent links of two identities cannot both commit.
-- (An identity already signs in to one account only: the primary key (app, method, subject).)
CREATE UNIQUE INDEX credentials_one_per_provider ON {{schema}}.credentials (user_id, method) WHERE method IN ('google', 'apple');
