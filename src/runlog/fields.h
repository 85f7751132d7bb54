// The fields of the records, each listed once with its key for the writer and the reader: a
// list is called as list(record, visit) and calls visit(key, member) for every field. The watch
// lists name the optional fields, in the order the log writes them (the clock-event counters
// are model/runlog.h's kClockCounterFields); the run lists name every field but the time, and
// run.jsonl writes its keys sorted. Keys are public (docs/WATCH.md, docs/RUN.md): append only.
#pragma once

#include "model/runlog.h"

namespace sparkdoc::runlog {

struct GpuFields {
  template <class Gpu, class Visit>
  void operator()(Gpu& g, Visit&& visit) const {
    visit("power_w", g.power_w);
    visit("temp_c", g.temp_c);
    visit("sm_clock_mhz", g.sm_clock_mhz);
    visit("mem_clock_mhz", g.mem_clock_mhz);
    visit("util_pct", g.util_pct);
    visit("mem_used_bytes", g.mem_used_bytes);
    visit("clock_event_reasons", g.clock_event_reasons);
    visit("energy_mj", g.energy_mj);
  }
};

struct CounterFields {
  template <class Counters, class Visit>
  void operator()(Counters& c, Visit&& visit) const {
    for (const ClockCounterField& field : kClockCounterFields) visit(field.key, c.*field.member);
  }
};

struct ProcessFields {
  template <class Process, class Visit>
  void operator()(Process& p, Visit&& visit) const {
    visit("name", p.name);
    visit("used_bytes", p.used_bytes);
  }
};

struct MemoryFields {
  template <class Memory, class Visit>
  void operator()(Memory& m, Visit&& visit) const {
    visit("total_bytes", m.total_bytes);
    visit("available_bytes", m.available_bytes);
    visit("cached_bytes", m.cached_bytes);
    visit("buffers_bytes", m.buffers_bytes);
    visit("shmem_bytes", m.shmem_bytes);
    visit("anon_bytes", m.anon_bytes);
    visit("swap_total_bytes", m.swap_total_bytes);
    visit("swap_used_bytes", m.swap_used_bytes);
    visit("psi_some_avg10", m.psi_some_avg10);
    visit("psi_full_avg10", m.psi_full_avg10);
  }
};

struct GpuInfoFields {
  template <class Info, class Visit>
  void operator()(Info& g, Visit&& visit) const {
    visit("name", g.name);
    visit("uuid", g.uuid);
    visit("pci_bus_id", g.pci_bus_id);
    visit("power_limit_w", g.power_limit_w);
  }
};

// run.jsonl writes a text passed with this as null when it is empty: an error that did not
// happen.
struct NullWhenEmpty {};

struct RunStartFields {
  template <class Start, class Visit>
  void operator()(Start& r, Visit&& visit) const {
    visit("sparkdoc_version", r.sparkdoc_version);
    visit("host", r.host);
    visit("pid", r.pid);
    visit("child_pid", r.child_pid);
    visit("argv", r.argv);
    visit("cwd", r.cwd);
    visit("env_removed", r.env_removed);
    visit("env_set", r.env_set);
    visit("distributed", r.distributed);
    visit("watch_log", r.watch_log);
    visit("telemetry", r.telemetry);
    visit("preflight", r.preflight);
    visit("oom_score_adj", r.oom_score_adj);
    visit("io_priority", r.io_priority);
    visit("tuned", r.tuned);
    visit("drop_cache_every_s", r.drop_cache_every_s);
    visit("drop_cache_for_s", r.drop_cache_for_s);
  }
};

struct TunedFields {
  template <class Tuned, class Visit>
  void operator()(Tuned& t, Visit&& visit) const {
    visit("path", t.path);
    visit("old", t.old_value);
    visit("new", t.new_value);
  }
};

struct CacheDropFields {
  template <class Drop, class Visit>
  void operator()(Drop& d, Visit&& visit) const {
    visit("ok", d.ok);
    visit("error", d.error, NullWhenEmpty{});
  }
};

struct LoadWindowEndFields {
  template <class End, class Visit>
  void operator()(End& e, Visit&& visit) const {
    visit("reason", e.reason);
  }
};

struct RunEndFields {
  template <class End, class Visit>
  void operator()(End& r, Visit&& visit) const {
    visit("exit_status", r.exit_status);
    visit("exit_code", r.exit_code);
    visit("signal", r.signal);
    visit("core_dumped", r.core_dumped);
    visit("duration_s", r.duration_s);
    visit("signals_forwarded", r.signals_forwarded);
    visit("restored", r.restored);
    visit("notes", r.notes);
  }
};

struct RestoredFields {
  template <class Restored, class Visit>
  void operator()(Restored& r, Visit&& visit) const {
    visit("path", r.path);
    visit("value", r.value);
    visit("ok", r.ok);
    visit("error", r.error, NullWhenEmpty{});
  }
};

}  // namespace sparkdoc::runlog
