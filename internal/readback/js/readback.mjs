// readback.mjs reads Parquet files with two readers that share no code
// with curate's Go writer: hyparquet (pure JavaScript, with only the codecs
// it ships: no codec package is loaded) and DuckDB. For each file it prints
// one JSON line:
//
//   {"file": PATH,
//    "hyparquet": {"columns": [...], "codecs": [...], "rows": [...]} or {"error": "..."},
//    "duckdb":    {"columns": [...], "codecs": [...], "rows": [...]} or {"error": "..."}}
//
// Integers come back as JSON numbers (an integer beyond 2^53 is an error,
// not a silent rounding). The Go side (package readback) compares the rows
// with what was written.
import { readFile } from 'node:fs/promises'
import { parquetMetadata, parquetReadObjects } from 'hyparquet'
import { DuckDBInstance } from '@duckdb/node-api'

// plain turns reader values into JSON values: BigInt to Number, Dates to
// ISO strings, typed arrays to arrays, nested objects and arrays
// recursively.
function plain(v) {
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new Error(`integer ${v} does not fit a JSON number`)
    }
    return Number(v)
  }
  if (v === null || v === undefined) return null
  if (v instanceof Date) return v.toISOString()
  if (ArrayBuffer.isView(v)) return Array.from(v, plain)
  if (Array.isArray(v)) return v.map(plain)
  if (typeof v === 'object') {
    const out = {}
    for (const [k, e] of Object.entries(v)) out[k] = plain(e)
    return out
  }
  return v
}

async function withHyparquet(path) {
  const buf = await readFile(path)
  const file = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const meta = parquetMetadata(file)
  const codecs = new Set()
  for (const rg of meta.row_groups) {
    for (const c of rg.columns) codecs.add(c.meta_data.codec)
  }
  const rows = await parquetReadObjects({ file })
  // The top-level columns: the root's direct children in the flattened
  // schema, each followed by its subtree.
  const names = []
  const after = (n) => {
    let next = n + 1
    for (let c = 0; c < (meta.schema[n].num_children || 0); c++) next = after(next)
    return next
  }
  for (let i = 1; i < meta.schema.length; i = after(i)) names.push(meta.schema[i].name)
  return { columns: names, codecs: [...codecs].sort(), rows: rows.map(plain) }
}

async function withDuckDB(conn, path) {
  const q = (sql) => conn.runAndReadAll(sql, [path])
  const rows = (await q('SELECT * FROM read_parquet($1)')).getRowObjectsJS()
  const desc = (await q('DESCRIBE SELECT * FROM read_parquet($1)')).getRowObjectsJS()
  const codecs = (await q('SELECT DISTINCT compression FROM parquet_metadata($1) ORDER BY 1')).getRowObjectsJS()
  return {
    columns: desc.map((d) => d.column_name),
    codecs: codecs.map((c) => String(c.compression)),
    rows: rows.map(plain),
  }
}

async function main() {
  const files = process.argv.slice(2)
  if (files.length === 0) {
    process.stderr.write('usage: node readback.mjs FILE.parquet...\n')
    process.exit(2)
  }
  const db = await DuckDBInstance.create(':memory:')
  const conn = await db.connect()
  for (const path of files) {
    const out = { file: path }
    for (const [name, read] of [['hyparquet', () => withHyparquet(path)], ['duckdb', () => withDuckDB(conn, path)]]) {
      try {
        out[name] = await read()
      } catch (err) {
        out[name] = { error: String(err && err.message ? err.message : err) }
      }
    }
    process.stdout.write(JSON.stringify(out) + '\n')
  }
  conn.closeSync()
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n')
  process.exit(1)
})
