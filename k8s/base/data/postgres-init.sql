-- Run once by the postgres image on an empty volume, after POSTGRES_DB
-- (orders) is created: ledger's database, as infra/local/run-postgres.sh
-- creates it on the local runtime.
CREATE DATABASE ledger OWNER lab;
