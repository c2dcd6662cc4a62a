-- Waymark database bootstrap: the database, its owner, an ingest role and a read-only report role.
--
-- Run as a PostgreSQL superuser, normally through deploy/postgres/bootstrap.sh, which also sets
-- passwords. By hand:
--
--   sudo -u postgres psql -v ON_ERROR_STOP=1 -f deploy/postgres/bootstrap.sql
--   sudo -u postgres psql -v ON_ERROR_STOP=1 -v dbname=waymark -v owner=waymark_owner \
--        -v ingest=waymark_ingest -v report=waymark_report -f deploy/postgres/bootstrap.sql
--
-- Idempotent: re-running it changes nothing that is already right, and re-applies the grants on
-- every existing table, so it also repairs grants after migrations that ran as another role.
--
-- Roles (none is a superuser, none can create databases or roles):
--   owner    owns the database and schema public, and so every table that `waymark db migrate`
--            creates. Run migrations as this role; never run the services as it.
--   ingest   the aggregator: SELECT, INSERT, UPDATE, DELETE on the tables, sequences in use,
--            temporary tables (for COPY staging). It cannot create, alter, truncate or drop tables.
--   report   `waymark report`, analysts and dashboards: SELECT only (and EXECUTE on functions,
--            which run with the caller's rights unless a migration declares them SECURITY DEFINER,
--            as the report rollup refresh is).
-- Default privileges make tables and sequences that the owner creates later (new migrations)
-- carry the same grants without another run of this script.

\set ON_ERROR_STOP on
\if :{?dbname} \else \set dbname waymark \endif
\if :{?owner} \else \set owner waymark_owner \endif
\if :{?ingest} \else \set ingest waymark_ingest \endif
\if :{?report} \else \set report waymark_report \endif

-- Roles. Passwords are set separately (bootstrap.sh sends SCRAM verifiers, or use \password).
SELECT format('CREATE ROLE %I', r) FROM unnest(ARRAY[:'owner', :'ingest', :'report']) AS r
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT', r)
  FROM unnest(ARRAY[:'owner', :'ingest', :'report']) AS r \gexec

-- The database, owned by the owner role.
SELECT format('CREATE DATABASE %I OWNER %I ENCODING %L TEMPLATE template0', :'dbname', :'owner', 'UTF8')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'dbname') \gexec
ALTER DATABASE :"dbname" OWNER TO :"owner";
REVOKE ALL ON DATABASE :"dbname" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"dbname" TO :"ingest";
GRANT CONNECT ON DATABASE :"dbname" TO :"report";

\connect :dbname

-- Schema public: owned by the owner; nobody else may create objects in it.
ALTER SCHEMA public OWNER TO :"owner";
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO :"ingest", :"report";

-- Objects that already exist.
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO :"ingest";
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO :"ingest";
GRANT SELECT ON ALL TABLES IN SCHEMA public TO :"report";
GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO :"report";

-- Objects the owner creates from now on (migrations run as the owner).
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
  GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"ingest";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
  GRANT USAGE, SELECT ON SEQUENCES TO :"ingest";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
  GRANT SELECT ON TABLES TO :"report";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public
  GRANT SELECT ON SEQUENCES TO :"report";

-- Tables in public that the owner does not own get no default privileges: a migration that ran as
-- a superuser, say. List them so the operator can hand them over (ALTER TABLE … OWNER TO owner).
SELECT format('warning: table %I is owned by %I, not %I; run: ALTER TABLE %I OWNER TO %I;',
              c.relname, pg_get_userbyid(c.relowner), :'owner', c.relname, :'owner') AS notice
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm') AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = :'owner');
