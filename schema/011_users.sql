-- People: user accounts, their roles per instance, their sign-in sessions
-- (package users), and the failure counters of throttled attempts such as
-- sign-ins (package throttle), shared by every origin.

CREATE TABLE users (
    id            bigserial PRIMARY KEY,
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    -- An Argon2id hash in the PHC string format, with its parameters, so
    -- that they can be raised later without invalidating older hashes.
    password_hash text NOT NULL,
    operator      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- Email addresses are compared case-insensitively.
CREATE UNIQUE INDEX users_email_ci ON users (lower(email));

CREATE TABLE user_roles (
    user_id     bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    instance_id bigint NOT NULL REFERENCES instances ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('edit', 'publish', 'manage', 'full')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, instance_id)
);
CREATE INDEX user_roles_instance ON user_roles (instance_id);

-- A session is known by the SHA-256 hash of its secret id (the cookie's
-- value): a copy of this table signs nobody in.
CREATE TABLE sessions (
    id_hash      bytea PRIMARY KEY,
    user_id      bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    -- Last use, for the idle timeout; moved forward at most once a minute.
    last_seen_at timestamptz NOT NULL,
    -- The absolute end of the session, whatever its use.
    expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);

-- Failed attempts per key (such as "login-email:<address>" or
-- "login-addr:<ip>") within the current window; a key with too many is
-- blocked until blocked_until.
CREATE TABLE throttle (
    key           text PRIMARY KEY,
    failures      integer NOT NULL,
    window_start  timestamptz NOT NULL,
    blocked_until timestamptz
);
CREATE INDEX throttle_window_start ON throttle (window_start);
