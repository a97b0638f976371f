-- wrk script: walks a list of request paths, for serve_bench.py (usable on its own).
--
--   WRK_PATHS_FILE=paths.txt wrk -t2 -c2 -d10s -s Benchmarks/serving/wrk_paths.lua http://127.0.0.1:PORT
--   WRK_PATHS='/jpeg/0?n={n} /jpeg/1?n={n}' wrk ... -s Benchmarks/serving/wrk_paths.lua http://127.0.0.1:PORT
--
-- Paths: one per line in the file WRK_PATHS_FILE, or whitespace-separated in WRK_PATHS. Each wrk thread
-- cycles over them, thread k of T (WRK_THREADS, default 2: set it to wrk's -t) starting at path
-- k * #paths / T so the threads do not ask for the same path at the same moment. "{n}" in a path is
-- replaced by a counter unique over the run (thread k sends WRK_N_BASE + k * 1000000 + 0, 1, 2, ...;
-- WRK_N_BASE defaults to 0): cold runs put it in a query string (escaped as the server needs) so that no
-- URL repeats; warm runs use paths without it.
--
-- Every response is checked: status 200 and, when WRK_EXPECT_TYPE is set, a Content-Type starting with it.
-- done() prints one line to stdout (after wrk's own report):
--   wrk_paths: requests=R ok=O bad_status=S bad_type=T body_bytes=B duration_us=D statuses=200:O,500:S
-- where ok counts the good responses only; wrk's own Requests/sec counts every completed response,
-- its "Non-2xx or 3xx responses" the bad statuses (3xx excepted).

local threads = {}
local thread_count = 0
local PER_THREAD = 1000000

local function load_paths()
  local paths = {}
  local file_name = os.getenv("WRK_PATHS_FILE")
  if file_name and file_name ~= "" then
    local f = assert(io.open(file_name, "r"), "wrk_paths.lua: cannot open " .. file_name)
    for line in f:lines() do
      line = line:gsub("^%s+", ""):gsub("%s+$", "")
      if line ~= "" then paths[#paths + 1] = line end
    end
    f:close()
  else
    for p in (os.getenv("WRK_PATHS") or ""):gmatch("%S+") do paths[#paths + 1] = p end
  end
  return paths
end

-- Main state: numbers each thread before wrk starts it (setting anything in a thread already started
-- would race with it, hence WRK_THREADS rather than a count made here).
function setup(thread)
  thread:set("thread_index", thread_count)
  thread_count = thread_count + 1
  threads[#threads + 1] = thread
end

-- Thread states from here to response().
local paths, position, sent, base, expect_type
requests_done, ok, bad_status, bad_type, body_bytes, status_text = 0, 0, 0, 0, 0, ""
local statuses = {}

function init(args)
  paths = load_paths()
  if #paths == 0 then
    io.stderr:write("wrk_paths.lua: no paths (set WRK_PATHS_FILE or WRK_PATHS)\n")
    os.exit(2)
  end
  base = tonumber(os.getenv("WRK_N_BASE") or "0") or 0
  expect_type = os.getenv("WRK_EXPECT_TYPE")
  if expect_type == "" then expect_type = nil end
  sent = 0
  local k, total = thread_index or 0, tonumber(os.getenv("WRK_THREADS") or "2") or 2
  position = math.floor(k * #paths / math.max(total, 1))
end

function request()
  local path = paths[position % #paths + 1]
  position = position + 1
  local n = base + (thread_index or 0) * PER_THREAD + sent
  sent = sent + 1
  path = path:gsub("{n}", tostring(n))
  return wrk.format("GET", path)
end

function response(status, headers, body)
  requests_done = requests_done + 1
  statuses[status] = (statuses[status] or 0) + 1
  if status ~= 200 then
    bad_status = bad_status + 1
  else
    local content_type = headers["Content-Type"] or headers["content-type"] or ""
    if expect_type and content_type:sub(1, #expect_type) ~= expect_type then
      bad_type = bad_type + 1
    else
      ok = ok + 1
      body_bytes = body_bytes + #(body or "")
    end
  end
  local parts = {}
  for s, c in pairs(statuses) do parts[#parts + 1] = s .. ":" .. c end
  table.sort(parts)
  status_text = table.concat(parts, ",")
end

function done(summary, latency, requests)
  local r, o, s, t, b = 0, 0, 0, 0, 0
  local merged = {}
  for _, thread in ipairs(threads) do
    r = r + (thread:get("requests_done") or 0)
    o = o + (thread:get("ok") or 0)
    s = s + (thread:get("bad_status") or 0)
    t = t + (thread:get("bad_type") or 0)
    b = b + (thread:get("body_bytes") or 0)
    for entry in (thread:get("status_text") or ""):gmatch("[^,]+") do
      local code, count = entry:match("(%d+):(%d+)")
      merged[code] = (merged[code] or 0) + tonumber(count)
    end
  end
  local parts = {}
  for code, count in pairs(merged) do parts[#parts + 1] = code .. ":" .. count end
  table.sort(parts)
  io.write(string.format("wrk_paths: requests=%d ok=%d bad_status=%d bad_type=%d body_bytes=%d duration_us=%d statuses=%s\n",
    r, o, s, t, b, summary.duration, table.concat(parts, ",")))
end
