//===- Mutator.h - seeded mutations of gg IR text ---------------*- C++ -*-===//
//
// Mutations that keep most of an input parseable, so that they reach the
// verifier and the passes rather than stopping in the lexer: whole lines
// deleted, duplicated, swapped or borrowed from another input; numbers set
// to extreme values; element types, layouts and scale kinds swapped;
// attributes dropped; shapes made dynamic or static; and, rarely, raw
// bytes changed. One seed gives one sequence of inputs.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_FUZZ_MUTATOR_H
#define GGC_FUZZ_MUTATOR_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace ggc::fuzz {

/// The inputs of a corpus file: split at `// -----` like -split-input-file,
/// with comment lines (RUN, CHECK, expected-error) dropped.
std::vector<std::string> splitCorpusFile(const std::string &text);

class Mutator {
public:
  /// `weights`: how often each corpus input is picked, relative to the
  /// others.
  Mutator(std::vector<std::string> corpus, const std::vector<double> &weights,
          uint64_t seed);

  /// A corpus input with one to four mutations applied.
  std::string next();

  /// A token's place in the text: [begin, end).
  struct Span {
    size_t begin, end;
  };

private:
  using Lines = std::vector<std::string>;

  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }
  void mutate(std::string &text);
  void mutateLines(std::string &text);
  bool replaceNumber(std::string &text, bool inTypes);
  std::string numberNear(const std::string &old);
  bool replaceWord(std::string &text, const std::vector<std::string> &group);
  void replaceAll(std::string &text, std::vector<Span> spans,
                  const std::string &word, const std::string &other);
  bool mutateMemRefType(std::string &text);
  bool dropAttribute(std::string &text);
  bool toggleDynamic(std::string &text);
  void mutateBytes(std::string &text);

  std::vector<std::string> corpus;
  std::discrete_distribution<size_t> choose;
  std::mt19937_64 rng;
};

} // namespace ggc::fuzz

#endif // GGC_FUZZ_MUTATOR_H
