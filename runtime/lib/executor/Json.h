//===- Json.h - enough JSON to read ggc's launch contract -------*- C++ -*-===//
//
// The compiler's C API gives each kernel's launch contract as JSON (see
// ggc_result_kernel_info); the executor reads it in C++ with this small
// parser rather than taking a JSON library dependency.
//
//===----------------------------------------------------------------------===//
#ifndef GGC_EXECUTOR_JSON_H
#define GGC_EXECUTOR_JSON_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ggc::executor::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  double number = 0;
  bool boolean = false;
  std::string string;
  std::vector<Value> array;
  std::map<std::string, Value> object;

  /// Member `key` of an object; throws Error naming it when absent.
  const Value &at(const std::string &key) const;
  bool has(const std::string &key) const { return object.count(key) != 0; }
  int64_t integer() const; ///< throws unless a whole number
  const std::string &text() const;
  /// The elements; throws unless an array (a `.array` of another kind
  /// would read as empty).
  const std::vector<Value> &items() const;
};

/// Throws Error with the offset of the first syntax error.
Value parse(const std::string &text);

} // namespace ggc::executor::json

#endif // GGC_EXECUTOR_JSON_H
