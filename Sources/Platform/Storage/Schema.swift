import Store

/// The versioned schema of the embedded store. Append migrations; never edit a released one.
enum Schema {
    static let migrations: [Migration] = [
        Migration(version: 1, name: "accounts, applications, users, numbers", sql: """
            CREATE TABLE accounts (
                api_key TEXT PRIMARY KEY,
                api_secret TEXT NOT NULL,
                previous_secret TEXT,
                previous_secret_expires_at INTEGER,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE applications (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                api_key TEXT NOT NULL REFERENCES accounts(api_key),
                name TEXT NOT NULL,
                capabilities TEXT NOT NULL,
                public_key TEXT NOT NULL,
                signature_secret TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            );
            CREATE TABLE users (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                application_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                display_name TEXT,
                image_url TEXT,
                properties TEXT NOT NULL DEFAULT '{}',
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (application_id, name)
            );
            CREATE TABLE numbers (
                msisdn TEXT PRIMARY KEY,
                api_key TEXT NOT NULL REFERENCES accounts(api_key),
                country TEXT NOT NULL,
                type TEXT NOT NULL,
                features TEXT NOT NULL,
                application_id TEXT REFERENCES applications(id) ON DELETE SET NULL,
                created_at INTEGER NOT NULL
            );
            """),
        Migration(version: 2, name: "conversations, members, events", sql: """
            CREATE TABLE conversations (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                application_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                display_name TEXT,
                image_url TEXT,
                properties TEXT NOT NULL DEFAULT '{}',
                ttl INTEGER,
                state TEXT NOT NULL DEFAULT 'ACTIVE',
                last_event_id INTEGER NOT NULL DEFAULT 0,
                empty_since INTEGER,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (application_id, name)
            );
            CREATE TABLE members (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                user_id TEXT NOT NULL,
                state TEXT NOT NULL,
                channel TEXT NOT NULL DEFAULT '{"type":"app"}',
                media TEXT NOT NULL DEFAULT '{}',
                initiator TEXT NOT NULL DEFAULT '{}',
                invited_at INTEGER,
                joined_at INTEGER,
                left_at INTEGER
            );
            CREATE INDEX members_by_conversation ON members (conversation_id, seq);
            CREATE INDEX members_by_user ON members (user_id, state);
            CREATE TABLE events (
                conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                type TEXT NOT NULL,
                from_member TEXT,
                body TEXT NOT NULL DEFAULT '{}',
                timestamp INTEGER NOT NULL,
                deleted_at INTEGER,
                PRIMARY KEY (conversation_id, seq)
            ) WITHOUT ROWID;
            """),
        Migration(version: 3, name: "video sessions", sql: """
            CREATE TABLE video_sessions (
                id TEXT PRIMARY KEY,
                owner TEXT NOT NULL,
                api_key TEXT NOT NULL,
                media_mode TEXT NOT NULL,
                archive_mode TEXT NOT NULL,
                location TEXT,
                created_at INTEGER NOT NULL
            );
            """),
        Migration(version: 4, name: "call legs", sql: """
            CREATE TABLE calls (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                uuid TEXT NOT NULL UNIQUE,
                application_id TEXT NOT NULL REFERENCES applications(id) ON DELETE CASCADE,
                conversation_id TEXT NOT NULL,
                member_id TEXT NOT NULL,
                parent_uuid TEXT,
                direction TEXT NOT NULL,
                from_endpoint TEXT NOT NULL,
                to_endpoint TEXT NOT NULL,
                status TEXT NOT NULL,
                network TEXT,
                ringing_timer INTEGER NOT NULL,
                length_timer INTEGER NOT NULL,
                start_time INTEGER NOT NULL,
                answered_at INTEGER,
                end_time INTEGER
            );
            CREATE INDEX calls_by_application ON calls (application_id, seq);
            CREATE INDEX calls_by_conversation ON calls (conversation_id);
            """),
        Migration(version: 5, name: "sip trunks, number trunks, device credentials", sql: """
            CREATE TABLE sip_trunks (
                id TEXT PRIMARY KEY,
                api_key TEXT NOT NULL REFERENCES accounts(api_key),
                name TEXT NOT NULL,
                host TEXT NOT NULL,
                port INTEGER NOT NULL,
                transport TEXT NOT NULL,
                username TEXT,
                password TEXT,
                register INTEGER NOT NULL DEFAULT 0,
                allow TEXT NOT NULL DEFAULT '',
                health_interval INTEGER NOT NULL DEFAULT 30,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (api_key, name)
            );
            ALTER TABLE numbers ADD COLUMN trunk_id TEXT REFERENCES sip_trunks(id) ON DELETE SET NULL;
            CREATE TABLE sip_credentials (
                user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                realm TEXT NOT NULL,
                username TEXT NOT NULL,
                ha1 TEXT NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (realm, username)
            );
            """),
        Migration(version: 6, name: "sip device registrations", sql: """
            CREATE TABLE sip_bindings (
                aor TEXT NOT NULL,
                contact TEXT NOT NULL,
                source_host TEXT NOT NULL,
                source_port INTEGER NOT NULL,
                transport TEXT NOT NULL,
                expires_at INTEGER NOT NULL,
                call_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                PRIMARY KEY (aor, contact)
            );
            CREATE INDEX sip_bindings_by_expiry ON sip_bindings (expires_at);
            """),
        Migration(version: 7, name: "sip trunk media encryption", sql: """
            ALTER TABLE sip_trunks ADD COLUMN media_encryption TEXT NOT NULL DEFAULT 'none';
            """),
        Migration(version: 8, name: "automatic archives' name and resolution", sql: """
            ALTER TABLE video_sessions ADD COLUMN archive_name TEXT;
            ALTER TABLE video_sessions ADD COLUMN archive_resolution TEXT;
            """),
        Migration(version: 9, name: "sip trunk dtmf", sql: """
            ALTER TABLE sip_trunks ADD COLUMN dtmf TEXT NOT NULL DEFAULT 'rfc4733';
            """),
        // Listing an application's users or conversations walks these in `seq` order instead of sorting all of them
        // for every page.
        Migration(version: 10, name: "users and conversations in order per application", sql: """
            CREATE INDEX users_by_application ON users (application_id, seq);
            CREATE INDEX conversations_by_application ON conversations (application_id, seq);
            """),
    ]
}
