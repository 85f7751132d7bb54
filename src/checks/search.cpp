// Symptom search for `sparkdoc explain "words"`: ranks checks and lint rules by the words they
// share with the query, and answers nothing below a score. Words are lowercase runs of letters and
// digits; a query word matches a check word when equal, or when the shorter (at least 4 letters)
// starts the longer ("hang" ~ "hangs"). Each match counts by the field it is in (keywords and title
// weigh most, cause least) times how rare the word is across the table, so "memory" matters less
// than "nvidia-smi". A query word that is a check ID puts that check first.
#include <algorithm>
#include <array>
#include <cmath>

#include "checks/lint.h"
#include "checks/registry.h"
#include "core/strings.h"

namespace sparkdoc::checks {
namespace {

constexpr std::array<std::string_view, 44> kStopWords{
    "a",    "an",   "the",  "and",   "or",   "of",    "to",     "in",   "on",   "at",    "is",
    "are",  "was",  "it",   "its",   "my",   "i",     "me",     "we",   "with", "while", "when",
    "but",  "for",  "from", "shows", "show", "after", "before", "be",   "by",   "as",    "this",
    "that", "what", "why",  "how",   "do",   "does",  "get",    "gets", "got",  "still", "even",
};

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    if (!word.empty() &&
        std::find(kStopWords.begin(), kStopWords.end(), word) == kStopWords.end()) {
      out.push_back(word);
    }
    word.clear();
  };
  for (char c : text) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
      alnum = true;
    }
    if (alnum)
      word += c;
    else
      flush();
  }
  flush();
  return out;
}

bool word_matches(std::string_view query, std::string_view word) {
  if (query == word) return true;
  std::string_view shorter = query.size() < word.size() ? query : word;
  std::string_view longer = query.size() < word.size() ? word : query;
  return shorter.size() >= 4 && longer.starts_with(shorter);
}

bool field_has(const std::vector<std::string>& field, std::string_view query) {
  return std::any_of(field.begin(), field.end(),
                     [&](const std::string& w) { return word_matches(query, w); });
}

struct Indexed {
  const CheckInfo* info;
  std::array<std::vector<std::string>, 5> fields;  // keywords, title, symptom, how, cause
};
constexpr std::array<double, 5> kFieldWeights{3.0, 3.0, 2.0, 0.5, 1.0};

// The best field weight at which the check mentions the query word; 0 when it does not.
double best_weight(const Indexed& c, std::string_view query) {
  double best = 0;
  for (size_t i = 0; i < c.fields.size(); ++i) {
    if (field_has(c.fields[i], query)) best = std::max(best, kFieldWeights[i]);
  }
  return best;
}

}  // namespace

std::vector<SearchHit> search_entries(std::string_view text, size_t max_results) {
  std::vector<Indexed> index;
  auto add = [&index](const CheckInfo& info) {
    index.push_back({&info,
                     {words_of(info.keywords), words_of(info.title), words_of(info.symptom),
                      words_of(info.how_checked), words_of(info.cause)}});
  };
  for (const auto& info : all_checks()) add(info);
  for (const auto& info : all_lint_rules()) add(info);
  auto query = words_of(text);
  // A word repeated in the query (an error text names a module twice) counts once.
  std::vector<std::string> distinct;
  for (std::string& q : query) {
    if (std::find(distinct.begin(), distinct.end(), q) == distinct.end()) {
      distinct.push_back(std::move(q));
    }
  }
  query = std::move(distinct);
  std::vector<double> scores(index.size(), 0.0);
  std::vector<std::vector<std::string>> matched(index.size());
  std::vector<double> best_single(index.size(), 0.0);
  auto n = static_cast<double>(index.size());
  for (const auto& q : query) {
    for (size_t i = 0; i < index.size(); ++i) {
      if (to_lower(index[i].info->id) == q) {
        scores[i] += 1000.0;
        best_single[i] += 1000.0;
        matched[i].push_back(q);
      }
    }
    std::vector<double> weights(index.size());
    size_t df = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      weights[i] = best_weight(index[i], q);
      if (weights[i] > 0) ++df;
    }
    if (df == 0) continue;
    double rarity = std::log(1.0 + n / static_cast<double>(df));
    for (size_t i = 0; i < index.size(); ++i) {
      scores[i] += weights[i] * rarity;
      best_single[i] = std::max(best_single[i], weights[i] * rarity);
      if (weights[i] > 0) matched[i].push_back(q);
    }
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < index.size(); ++i) {
    // One shared word is a coincidence unless it is rare and where the entry names its subject
    // ("gibberish" in a keyword); two or more words are a match at the threshold.
    const bool answers = matched[i].size() >= 2 ? scores[i] >= kSearchMatchScore
                                                : best_single[i] >= kSearchSingleWordScore;
    if (answers) order.push_back(i);
  }
  // Stable: equal scores keep table order.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  std::vector<SearchHit> out;
  for (size_t i = 0; i < order.size() && i < max_results; ++i) {
    out.push_back({index[order[i]].info, scores[order[i]], matched[order[i]]});
  }
  return out;
}

std::vector<const CheckInfo*> search_checks(std::string_view text, size_t max_results) {
  std::vector<const CheckInfo*> out;
  for (const SearchHit& hit : search_entries(text, max_results)) out.push_back(hit.info);
  return out;
}

}  // namespace sparkdoc::checks
