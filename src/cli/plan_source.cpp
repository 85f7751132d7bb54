#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "cli/plan_inputs.h"
#include "cli/progress.h"
#include "core/fs.h"
#include "core/units.h"
#include "plan/locate.h"

namespace sparkdoc::cli {
namespace {

// The headers of a Hub model, fetched (or read from sparkdoc's cache), with a progress line on
// stderr while the shards come.
Result<hub::FetchResult> fetch_model(const hub::ModelId& id, const PlanFlags& flags) {
  auto settings = hub::settings_from_env();
  if (!settings) return tl::unexpected(std::move(settings.error()));
  hub::FetchOptions options;
  options.refresh = flags.refresh;
  options.offline = flags.offline;
  auto line = std::make_shared<ProgressLine>(std::chrono::seconds(1));
  const std::string label = id.label();
  const std::string endpoint = settings->endpoint;
  options.progress = [line, label, endpoint](size_t shard, size_t shards, uint64_t bytes) {
    line->show(fmt::format("fetching the headers of {} from {}: shard {} of {}, {}", label,
                           endpoint, shard, shards, format_binary(bytes)));
  };
  auto fetched = hub::fetch_headers(id, *settings, options);
  line->clear();
  return fetched;
}

// Where the plan's headers came from, said in the plan: resolved_from, notes, and the "hub" key
// of the JSON.
}  // namespace

void tell_source(plan::Plan& p, const PlanSource& source) {
  if (!source.fetched || !source.id) return;
  const hub::ModelId& id = *source.id;
  const hub::FetchResult& f = *source.fetched;
  const std::string commit =
      f.commit.empty() ? "" : fmt::format(", commit {}", f.commit.substr(0, 12));
  if (f.from_cache) {
    p.resolved_from =
        fmt::format("headers of {} from sparkdoc's cache{}", id.label(),
                    f.endpoint.empty() ? "" : " (fetched from " + f.endpoint + commit + ")");
    p.notes.push_back(
        fmt::format("the headers were read from {} without the network{}; "
                    "--refresh fetches them again",
                    f.dir, f.fetched_at.empty() ? "" : ", as fetched " + f.fetched_at));
  } else {
    p.resolved_from =
        fmt::format("headers of {} fetched from {}{}", id.label(), f.endpoint, commit);
    p.notes.push_back(fmt::format(
        "fetched {} shard header{}, {} in {} requests, from {}{} into {}; the next plan of this "
        "revision reads them from there",
        f.shards, f.shards == 1 ? "" : "s", format_binary(f.traffic.body_bytes), f.traffic.requests,
        f.endpoint,
        f.checkpoint_file_bytes ? " (of a checkpoint of " + format_gb(f.checkpoint_file_bytes) + ")"
                                : "",
        f.dir));
  }
  for (const auto& n : f.notes) p.notes.push_back(n);
}

nlohmann::json hub_json(const PlanSource& source) {
  if (!source.fetched || !source.id) return nullptr;
  const hub::ModelId& id = *source.id;
  const hub::FetchResult& f = *source.fetched;
  return {{"model", id.repo()},
          {"revision", id.revision},
          {"endpoint", f.endpoint},
          {"commit", f.commit},
          {"cache_dir", f.dir},
          {"from_cache", f.from_cache},
          {"fetched_at", f.fetched_at},
          {"shards", f.shards},
          {"requests", f.traffic.requests},
          {"body_bytes", f.traffic.body_bytes},
          {"header_bytes", f.traffic.header_bytes},
          {"checkpoint_file_bytes", f.checkpoint_file_bytes},
          {"range_ignored", f.range_ignored}};
}

Result<PlanSource> plan_source(const PlanFlags& flags) {
  const std::string& model = flags.model;
  const auto roots = plan::hub_cache_roots();
  if (exists(model) || !hub::looks_like_model_id(model)) {
    if (!flags.revision.empty()) {
      return fail(
          fmt::format("--revision names a revision of a Hub model (ORG/NAME), and {} is "
                      "a path",
                      model));
    }
    return PlanSource{plan::locate_model(model, roots), std::nullopt, std::nullopt};
  }
  auto parsed = hub::parse_model_id(model, flags.revision);
  if (!parsed) {
    return fail(fmt::format("{} is no file or folder here, and not a Hub model either: {}", model,
                            parsed.error().message));
  }
  // A model downloaded into the Hugging Face cache is planned from there.
  if (!parsed->revision_given) {
    if (std::string entry = plan::locate_model(parsed->repo(), roots); entry != parsed->repo()) {
      return PlanSource{entry, std::nullopt, std::nullopt};
    }
  } else if (auto snapshot = plan::locate_revision(parsed->repo(), parsed->revision, roots)) {
    return PlanSource{*snapshot, std::nullopt, std::nullopt};
  }
  if (flags.strict_size) {
    return fail(
        fmt::format("--strict-size needs every shard's data, and {} is not downloaded "
                    "(only its headers would be fetched): download it, or drop "
                    "--strict-size",
                    parsed->label()));
  }
  auto f = fetch_model(*parsed, flags);
  if (!f) return tl::unexpected(std::move(f.error()));
  std::string dir = f->dir;
  return PlanSource{std::move(dir), std::move(*parsed), std::move(*f)};
}

}  // namespace sparkdoc::cli
