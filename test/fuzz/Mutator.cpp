//===- Mutator.cpp - seeded mutations of gg IR text -------------------------===//
#include "Mutator.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace ggc::fuzz {

namespace {

/// Sizes and attribute values at the edges of what the compiler's int64_t
/// and the kernel's i32 arithmetic hold, and tile-sized values around them.
const std::vector<std::string> kExtremeNumbers = {
    "0", "1", "-1", "2", "3", "7", "8", "16", "63", "64", "65", "127", "128",
    "129", "192", "255", "256", "257", "1024", "65536", "1073741824",
    "1073741825", "2147483647", "2147483648", "4294967296", "4294967301",
    "4611686018427387904", "9223372036854775807", "-9223372036854775808",
    "9223372036854775808", "18446744073709551616"};

const std::vector<std::vector<std::string>> kWordGroups = {
    {"bf16", "f16", "f32", "f64", "f8E4M3FN", "f8E5M2", "i1", "i8", "i32",
     "i64", "index"},
    {"contiguous", "masked", "padded_contiguous", "k_grouped"},
    {"mk", "km", "nk", "kn", "mn", "nm"},
    {"tensor", "channel", "block", "mx", "k_major", "mn_major"},
    {"m_fastest", "n_fastest", "normal", "evict_first", "evict_last", "skip",
     "compute"},
    {"arith.mulf", "arith.addf", "arith.subf", "arith.maximumf", "gg.silu",
     "gg.sigmoid", "math.exp"},
    {"a_scale", "b_scale", "rows", "cols", "group_scalars"},
};

/// The op's optional attributes, and #gg.config's optional parameter
/// (dropping a required one only exercises the attribute parser).
const std::vector<std::string> kAttributeNames = {
    "config",    "store_pool", "expected_m", "schedule",
    "padding",   "overfetch",  "tf32",       "split_n"};

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '%' ||
         c == '#' || c == '$' || c == '.' || c == '@' || c == '^';
}

/// Whether a token may start at `i`: after a separator, or after the `x`
/// of a shape (`4x256xbf16`), which follows a size or `?`.
bool startsToken(const std::string &text, size_t i) {
  if (i == 0 || !isIdentifierChar(text[i - 1]))
    return true;
  return text[i - 1] == 'x' && i >= 2 &&
         (std::isdigit(static_cast<unsigned char>(text[i - 2])) ||
          text[i - 2] == '?');
}

bool endsToken(const std::string &text, size_t end) {
  return end >= text.size() || !isIdentifierChar(text[end]) || text[end] == 'x';
}

using Span = Mutator::Span;

std::vector<Span> numberSpans(const std::string &text) {
  std::vector<Span> spans;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) ||
        !startsToken(text, i))
      continue;
    size_t begin = i > 0 && text[i - 1] == '-' ? i - 1 : i;
    size_t end = i;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    if (endsToken(text, end))
      spans.push_back({begin, end});
    i = end;
  }
  return spans;
}

std::vector<Span> wordSpans(const std::string &text, const std::string &word) {
  std::vector<Span> spans;
  for (size_t at = text.find(word); at != std::string::npos;
       at = text.find(word, at + 1)) {
    size_t end = at + word.size();
    if (startsToken(text, at) &&
        (end >= text.size() || !isIdentifierChar(text[end])))
      spans.push_back({at, end});
  }
  return spans;
}

/// The end of an attribute value starting at `i`: the first ',' or closing
/// bracket outside the brackets the value opens.
size_t valueEnd(const std::string &text, size_t i) {
  int depth = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<' || c == '[' || c == '{' || c == '(')
      ++depth;
    else if (c == '>' || c == ']' || c == '}' || c == ')') {
      if (depth == 0)
        return i;
      --depth;
    } else if (c == ',' && depth == 0) {
      return i;
    }
  }
  return i;
}

/// MLIR 22's parser dereferences a null type on `array<index: ...>`
/// (parseDenseArrayAttr calls getIntOrFloatBitWidth on index): a known
/// upstream crash, not ours to find again and again.
bool hitsKnownMlirCrash(const std::string &text, Span s,
                        const std::string &replacement) {
  return replacement == "index" && s.begin >= 6 &&
         text.compare(s.begin - 6, 6, "array<") == 0;
}

std::vector<Span> memRefTypeSpans(const std::string &text) {
  std::vector<Span> types;
  for (size_t at = text.find("memref<"); at != std::string::npos;
       at = text.find("memref<", at + 1))
    types.push_back({at, std::min(text.size(), valueEnd(text, at + 7) + 1)});
  return types;
}

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::string joinLines(const std::vector<std::string> &lines) {
  std::string text;
  for (const std::string &line : lines)
    text += line + "\n";
  return text;
}

} // namespace

std::vector<std::string> splitCorpusFile(const std::string &text) {
  std::vector<std::string> inputs(1);
  for (const std::string &line : splitLines(text)) {
    size_t first = line.find_first_not_of(" \t");
    if (line.rfind("// -----", 0) == 0)
      inputs.emplace_back();
    else if (first != std::string::npos && line.compare(first, 2, "//") != 0)
      inputs.back() += line + "\n";
  }
  inputs.erase(std::remove_if(inputs.begin(), inputs.end(),
                              [](const std::string &s) {
                                return s.find("gg.grouped_matmul") ==
                                       std::string::npos;
                              }),
               inputs.end());
  return inputs;
}

Mutator::Mutator(std::vector<std::string> corpus,
                 const std::vector<double> &weights, uint64_t seed)
    : corpus(std::move(corpus)), choose(weights.begin(), weights.end()),
      rng(seed) {}

std::string Mutator::next() {
  std::string text = corpus[choose(rng)];
  // Mostly one mutation: each more makes a mutant that still reaches the
  // passes rarer.
  size_t roll = pick(20);
  for (size_t n = roll < 12 ? 1 : roll < 17 ? 2 : 3 + pick(2); n > 0; --n)
    mutate(text);
  return text;
}

void Mutator::mutate(std::string &text) {
  // A kind that finds nothing to change (no attribute to drop) gives way to
  // another drawn afresh, so line edits stay as rare as intended.
  for (int attempt = 0; attempt < 8; ++attempt) {
    size_t choice = pick(100);
    bool changed = true;
    if (choice < 35)
      changed = mutateMemRefType(text);
    else if (choice < 55)
      changed = replaceNumber(text, /*inTypes=*/false);
    else if (choice < 72)
      changed = replaceWord(text, kWordGroups[pick(kWordGroups.size())]);
    else if (choice < 85)
      changed = dropAttribute(text);
    else if (choice < 96)
      mutateLines(text);
    else
      mutateBytes(text);
    if (changed)
      return;
  }
}

void Mutator::mutateLines(std::string &text) {
  Lines lines = splitLines(text);
  if (lines.empty())
    return;
  size_t i = pick(lines.size()), j = pick(lines.size());
  switch (pick(4)) {
  case 0:
    lines.erase(lines.begin() + i);
    break;
  case 1:
    lines.insert(lines.begin() + i, lines[j]);
    break;
  case 2:
    std::swap(lines[i], lines[j]);
    break;
  default: {
    Lines other = splitLines(corpus[pick(corpus.size())]);
    if (!other.empty())
      lines.insert(lines.begin() + i, other[pick(other.size())]);
    break;
  }
  }
  text = joinLines(lines);
}

bool Mutator::replaceNumber(std::string &text, bool inTypes) {
  std::vector<Span> spans = numberSpans(text);
  // Outside types: a size changed in one use of a type and not in the
  // others stops in the parser; mutateMemRefType changes them alike.
  if (!inTypes) {
    std::vector<Span> types = memRefTypeSpans(text);
    spans.erase(std::remove_if(spans.begin(), spans.end(),
                               [&](Span s) {
                                 return std::any_of(
                                     types.begin(), types.end(), [&](Span t) {
                                       return s.begin >= t.begin &&
                                              s.end <= t.end;
                                     });
                               }),
                spans.end());
  }
  if (spans.empty())
    return false;
  Span s = spans[pick(spans.size())];
  text.replace(s.begin, s.end - s.begin,
               numberNear(text.substr(s.begin, s.end - s.begin)));
  return true;
}

std::string Mutator::numberNear(const std::string &old) {
  // Half extremes, which the verifier must reject cleanly; half values
  // near the old one, which often pass it and reach the passes.
  if (pick(2) == 0)
    return kExtremeNumbers[pick(kExtremeNumbers.size())];
  errno = 0;
  long long value = std::strtoll(old.c_str(), nullptr, 10);
  if (errno != 0 || value < -(1LL << 40) || value > (1LL << 40))
    return std::to_string(pick(4096));
  const long long steps[] = {value * 2, value / 2, value + 8, value - 8,
                             value + 1, value - 1, value + 64, value * 3};
  return std::to_string(steps[pick(8)]);
}

bool Mutator::replaceWord(std::string &text,
                          const std::vector<std::string> &group) {
  std::vector<Span> spans;
  for (const std::string &word : group)
    for (Span s : wordSpans(text, word))
      spans.push_back(s);
  if (spans.empty())
    return false;
  Span s = spans[pick(spans.size())];
  std::string word = text.substr(s.begin, s.end - s.begin);
  const std::string &other = group[pick(group.size())];
  if (hitsKnownMlirCrash(text, s, other))
    return false;
  if (pick(2) == 0) { // every occurrence, so that uses still agree
    replaceAll(text, spans, word, other);
    return true;
  }
  text.replace(s.begin, s.end - s.begin, other);
  return true;
}

void Mutator::replaceAll(std::string &text, std::vector<Span> spans,
                         const std::string &word, const std::string &other) {
  // From the last, so that the earlier spans stay where they are.
  std::sort(spans.begin(), spans.end(),
            [](Span a, Span b) { return a.begin < b.begin; });
  for (auto it = spans.rbegin(); it != spans.rend(); ++it)
    if (text.compare(it->begin, it->end - it->begin, word) == 0 &&
        !hitsKnownMlirCrash(text, *it, other))
      text.replace(it->begin, it->end - it->begin, other);
}

bool Mutator::mutateMemRefType(std::string &text) {
  // Every use of a type is changed alike (the function's argument and the
  // op's operand), so the mutant parses and reaches the verifier.
  std::vector<Span> types = memRefTypeSpans(text);
  if (types.empty())
    return false;
  Span s = types[pick(types.size())];
  std::string type = text.substr(s.begin, s.end - s.begin);
  std::string mutated = type;
  switch (pick(3)) {
  case 0:
    if (!replaceNumber(mutated, /*inTypes=*/true))
      return false;
    break;
  case 1:
    if (!toggleDynamic(mutated))
      return false;
    break;
  default:
    if (!replaceWord(mutated, kWordGroups[0]))
      return false;
    break;
  }
  for (size_t at = text.find(type); at != std::string::npos;
       at = text.find(type, at + mutated.size())) {
    text.replace(at, type.size(), mutated);
  }
  return true;
}

bool Mutator::dropAttribute(std::string &text) {
  std::vector<Span> spans;
  for (const std::string &name : kAttributeNames)
    for (Span s : wordSpans(text, name + " = "))
      spans.push_back(s);
  if (spans.empty())
    return false;
  Span s = spans[pick(spans.size())];
  size_t begin = s.begin, end = valueEnd(text, s.end);
  if (end < text.size() && text[end] == ',') {
    ++end;
    while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end])))
      ++end;
  } else {
    // The last entry: its separating comma goes with it.
    size_t before = text.find_last_not_of(" \n", begin == 0 ? 0 : begin - 1);
    if (before != std::string::npos && text[before] == ',')
      begin = before;
  }
  text.erase(begin, end - begin);
  return true;
}

bool Mutator::toggleDynamic(std::string &text) {
  std::vector<size_t> dynamic;
  for (size_t i = text.find('?'); i != std::string::npos;
       i = text.find('?', i + 1))
    dynamic.push_back(i);
  std::vector<Span> sizes;
  for (Span s : numberSpans(text))
    if (s.end < text.size() && text[s.end] == 'x')
      sizes.push_back(s);
  if (!dynamic.empty() && (sizes.empty() || pick(2) == 0)) {
    text.replace(dynamic[pick(dynamic.size())], 1,
                 kExtremeNumbers[pick(kExtremeNumbers.size())]);
    return true;
  }
  if (sizes.empty())
    return false;
  Span s = sizes[pick(sizes.size())];
  text.replace(s.begin, s.end - s.begin, "?");
  return true;
}

void Mutator::mutateBytes(std::string &text) {
  static const std::string kBytes = "{}<>()[],:=%@#x?-0123456789 \n\"\\\x01\xff";
  for (size_t n = 1 + pick(3); n > 0 && !text.empty(); --n) {
    size_t at = pick(text.size());
    char c = kBytes[pick(kBytes.size())];
    switch (pick(3)) {
    case 0:
      text[at] = c;
      break;
    case 1:
      text.erase(at, 1);
      break;
    default:
      text.insert(text.begin() + at, c);
      break;
    }
  }
}

} // namespace ggc::fuzz
