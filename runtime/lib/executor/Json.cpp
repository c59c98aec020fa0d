//===- Json.cpp - enough JSON to read ggc's launch contract ----------------===//
#include "Json.h"

#include "ggc/Executor.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace ggc::executor::json {

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : text_(text) {}

  Value document() {
    Value v = value();
    skipSpace();
    if (at_ != text_.size())
      fail("trailing characters");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw Error("ggc executor: the compiler's kernel info is not valid JSON: " +
                what + " at offset " + std::to_string(at_));
  }
  void skipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])))
      ++at_;
  }
  bool take(char c) {
    skipSpace();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c))
      fail(std::string("expected '") + c + "'");
  }
  bool word(const char *w) {
    size_t n = std::char_traits<char>::length(w);
    if (text_.compare(at_, n, w) != 0)
      return false;
    at_ += n;
    return true;
  }

  Value value() {
    skipSpace();
    if (at_ >= text_.size())
      fail("unexpected end");
    // The contract nests a few levels; a deep input would exhaust the stack.
    if (depth_ >= kMaxDepth)
      fail("nested more than " + std::to_string(kMaxDepth) + " levels deep");
    struct Nested {
      int &depth;
      explicit Nested(int &d) : depth(++d) {}
      ~Nested() { --depth; }
    } nested(depth_);
    Value v;
    char c = text_[at_];
    if (c == '{') {
      v.kind = Value::Kind::Object;
      ++at_;
      if (take('}'))
        return v;
      do {
        skipSpace();
        std::string key = string();
        expect(':');
        v.object[key] = value();
      } while (take(','));
      expect('}');
    } else if (c == '[') {
      v.kind = Value::Kind::Array;
      ++at_;
      if (take(']'))
        return v;
      do
        v.array.push_back(value());
      while (take(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Value::Kind::String;
      v.string = string();
    } else if (word("true") || word("false")) {
      v.kind = Value::Kind::Bool;
      v.boolean = text_[at_ - 1] == 'e' && text_[at_ - 2] == 'u';
    } else if (word("null")) {
      v.kind = Value::Kind::Null;
    } else {
      v.kind = Value::Kind::Number;
      const char *begin = text_.c_str() + at_;
      char *end = nullptr;
      v.number = std::strtod(begin, &end);
      if (end == begin)
        fail("unexpected character");
      at_ += static_cast<size_t>(end - begin);
    }
    return v;
  }

  // The compiler writes ASCII names; escapes other than \uXXXX are decoded.
  std::string string() {
    if (at_ >= text_.size() || text_[at_] != '"')
      fail("expected a string");
    ++at_;
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size())
        break;
      char e = text_[at_++];
      switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        std::string digits = text_.substr(at_, 4);
        if (digits.size() != 4 ||
            !std::all_of(digits.begin(), digits.end(), [](unsigned char d) {
              return std::isxdigit(d) != 0;
            }))
          fail("a \\u escape takes four hex digits");
        out += static_cast<char>(std::strtol(digits.c_str(), nullptr, 16));
        at_ += 4;
        break;
      }
      default: out += e;
      }
    }
    if (at_ >= text_.size())
      fail("unterminated string");
    ++at_;
    return out;
  }

  static constexpr int kMaxDepth = 64;
  const std::string &text_;
  size_t at_ = 0;
  int depth_ = 0;
};

} // namespace

const Value &Value::at(const std::string &key) const {
  auto it = object.find(key);
  if (kind != Kind::Object || it == object.end())
    throw Error("ggc executor: the compiler's kernel info lacks '" + key + "'");
  return it->second;
}

int64_t Value::integer() const {
  // Past 2^53 a double holds no exact count, and past 2^63 the cast is
  // undefined: both are refused with the non-integers.
  if (kind != Kind::Number || std::floor(number) != number ||
      std::fabs(number) > 9007199254740992.0)
    throw Error("ggc executor: the compiler's kernel info has a non-integer "
                "where a count belongs");
  return static_cast<int64_t>(number);
}

const std::string &Value::text() const {
  if (kind != Kind::String)
    throw Error("ggc executor: the compiler's kernel info has a non-string "
                "where a name belongs");
  return string;
}

const std::vector<Value> &Value::items() const {
  if (kind != Kind::Array)
    throw Error("ggc executor: the compiler's kernel info has a non-array "
                "where a list belongs");
  return array;
}

Value parse(const std::string &text) { return Parser(text).document(); }

} // namespace ggc::executor::json
