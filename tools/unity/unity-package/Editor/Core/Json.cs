// A small dependency-free JSON reader and writer (C# 7.2, no Unity types).
// Values are: null, bool, string, long, double, List<object>, Dictionary<string, object>.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>Thrown when a JSON text cannot be parsed.</summary>
    public sealed class JsonParseException : Exception
    {
        /// <summary>Character offset where parsing failed.</summary>
        public int Position { get; }

        public JsonParseException(string message, int position)
            : base(message + " at offset " + position)
        {
            Position = position;
        }
    }

    /// <summary>Parses and writes JSON using plain .NET collections.</summary>
    public static class Json
    {
        /// <summary>Deepest nesting accepted, so a hostile frame cannot overflow the stack.</summary>
        public const int MaxDepth = 64;

        /// <summary>Parses one JSON value; trailing non-whitespace is an error.</summary>
        public static object Parse(string text)
        {
            if (text == null) throw new ArgumentNullException(nameof(text));
            var reader = new Reader(text);
            reader.SkipWhitespace();
            object value = reader.ReadValue(0);
            reader.SkipWhitespace();
            if (!reader.AtEnd) throw new JsonParseException("Unexpected trailing characters", reader.Position);
            return value;
        }

        /// <summary>Serializes a value made of the supported types (plus ints, floats, enums, dictionaries and sequences).</summary>
        public static string Serialize(object value)
        {
            var builder = new StringBuilder();
            Write(builder, value, 0);
            return builder.ToString();
        }

        /// <summary>
        /// Where a parsed value holds half a UTF-16 surrogate pair (JSON can escape one, UTF-8 cannot carry it),
        /// as a path like "args.items[0].name", or null when every string is whole.
        /// </summary>
        public static string FindUnpairedSurrogate(object value, string path)
        {
            if (value is string text) return UnpairedAt(text) >= 0 ? path : null;
            if (value is Dictionary<string, object> dict)
            {
                foreach (KeyValuePair<string, object> pair in dict)
                {
                    string inner = path + "." + pair.Key;
                    if (UnpairedAt(pair.Key) >= 0) return inner;
                    string found = FindUnpairedSurrogate(pair.Value, inner);
                    if (found != null) return found;
                }
            }
            else if (value is List<object> list)
            {
                for (int i = 0; i < list.Count; i++)
                {
                    string found = FindUnpairedSurrogate(list[i], path + "[" + i.ToString(CultureInfo.InvariantCulture) + "]");
                    if (found != null) return found;
                }
            }
            return null;
        }

        /// <summary>Index of the first half surrogate pair in a string, or -1.</summary>
        public static int UnpairedAt(string s)
        {
            for (int i = 0; i < s.Length; i++)
            {
                char c = s[i];
                if (!char.IsSurrogate(c)) continue;
                if (char.IsHighSurrogate(c) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1])) { i++; continue; }
                return i;
            }
            return -1;
        }

        /// <summary>
        /// The top-level string member <paramref name="key"/> of a JSON object text that Parse refused
        /// (too deep, a bad number further on), so the refusal can still name the request it answers.
        /// Skips nested values without recursion; null when the text is not an object or has no such string.
        /// </summary>
        public static string TryReadTopLevelString(string text, string key)
        {
            var reader = new Reader(text);
            try { return reader.ScanTopLevelString(key); }
            catch (JsonParseException) { return null; }
        }

        private static void Write(StringBuilder sb, object value, int depth)
        {
            if (depth > MaxDepth) throw new InvalidOperationException("JSON value nested too deeply");
            if (value == null) { sb.Append("null"); return; }
            if (value is string text) { WriteString(sb, text); return; }
            if (value is bool flag) { sb.Append(flag ? "true" : "false"); return; }
            if (value is double d) { WriteDouble(sb, d); return; }
            if (value is float f) { WriteDouble(sb, JsonNumbers.ShortestForFloat(f)); return; }
            if (value is decimal m) { sb.Append(m.ToString(CultureInfo.InvariantCulture)); return; }
            if (value is int || value is long || value is short || value is byte
                || value is uint || value is ulong || value is ushort || value is sbyte)
            {
                sb.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
                return;
            }
            if (value is Enum) { WriteString(sb, value.ToString()); return; }
            if (value is IDictionary<string, object> dict) { WriteObject(sb, dict, depth); return; }
            if (value is IDictionary legacy)
            {
                var copy = new Dictionary<string, object>();
                foreach (DictionaryEntry entry in legacy) copy[Convert.ToString(entry.Key, CultureInfo.InvariantCulture)] = entry.Value;
                WriteObject(sb, copy, depth);
                return;
            }
            if (value is IEnumerable sequence)
            {
                sb.Append('[');
                bool first = true;
                foreach (object item in sequence)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    Write(sb, item, depth + 1);
                }
                sb.Append(']');
                return;
            }
            WriteString(sb, value.ToString());
        }

        private static void WriteObject(StringBuilder sb, IDictionary<string, object> dict, int depth)
        {
            sb.Append('{');
            bool first = true;
            foreach (KeyValuePair<string, object> pair in dict)
            {
                if (!first) sb.Append(',');
                first = false;
                WriteString(sb, pair.Key);
                sb.Append(':');
                Write(sb, pair.Value, depth + 1);
            }
            sb.Append('}');
        }

        private static void WriteDouble(StringBuilder sb, double d)
        {
            // JSON has no NaN or Infinity; null is the honest stand-in.
            if (double.IsNaN(d) || double.IsInfinity(d)) { sb.Append("null"); return; }
            sb.Append(JsonNumbers.Format(d));
        }

        private static void WriteString(StringBuilder sb, string s)
        {
            sb.Append('"');
            // Copy runs of plain characters in one Append: large payloads (screenshots) are mostly plain.
            int run = 0;
            for (int i = 0; i < s.Length; i++)
            {
                char c = s[i];
                if (c >= 0x20 && c != '"' && c != '\\' && !char.IsSurrogate(c)) continue;
                if (char.IsHighSurrogate(c) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1])) { i++; continue; }
                if (i > run) sb.Append(s, run, i - run);
                run = i + 1;
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    case '\b': sb.Append("\\b"); break;
                    case '\f': sb.Append("\\f"); break;
                    // Control characters, and half surrogate pairs: UTF-8 cannot carry those, a \\u escape can.
                    default: sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture)); break;
                }
            }
            if (run < s.Length) sb.Append(s, run, s.Length - run);
            sb.Append('"');
        }

        private sealed class Reader
        {
            private readonly string _text;
            private int _pos;

            public Reader(string text) { _text = text; }

            public int Position => _pos;
            public bool AtEnd => _pos >= _text.Length;

            public void SkipWhitespace()
            {
                while (_pos < _text.Length)
                {
                    char c = _text[_pos];
                    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') _pos++;
                    else break;
                }
            }

            private JsonParseException Error(string message) => new JsonParseException(message, _pos);

            public string ScanTopLevelString(string key)
            {
                SkipWhitespace();
                if (AtEnd || _text[_pos] != '{') return null;
                _pos++;
                while (true)
                {
                    SkipWhitespace();
                    if (AtEnd || _text[_pos] != '"') return null;
                    string name = ReadString();
                    SkipWhitespace();
                    if (AtEnd || _text[_pos] != ':') return null;
                    _pos++;
                    SkipWhitespace();
                    if (AtEnd) return null;
                    if (name == key && _text[_pos] == '"') return ReadString();
                    SkipValue();
                    SkipWhitespace();
                    if (AtEnd || _text[_pos] != ',') return null;
                    _pos++;
                }
            }

            /// <summary>Moves past one value of any depth, counting brackets instead of recursing.</summary>
            private void SkipValue()
            {
                int depth = 0;
                do
                {
                    SkipWhitespace();
                    if (AtEnd) throw Error("Unexpected end of JSON");
                    char c = _text[_pos];
                    if (c == '"') ReadString();
                    else if (c == '{' || c == '[') { depth++; _pos++; }
                    else if (c == '}' || c == ']') { depth--; _pos++; }
                    else if (c == ',' || c == ':') _pos++;
                    else
                    {
                        // A number or a literal: up to the next delimiter.
                        while (!AtEnd && ",:]}{[\" \t\r\n".IndexOf(_text[_pos]) < 0) _pos++;
                    }
                } while (depth > 0);
            }

            public object ReadValue(int depth)
            {
                if (depth > MaxDepth) throw Error("JSON nested deeper than " + MaxDepth);
                if (AtEnd) throw Error("Unexpected end of JSON");
                char c = _text[_pos];
                switch (c)
                {
                    case '{': return ReadObject(depth);
                    case '[': return ReadArray(depth);
                    case '"': return ReadString();
                    case 't': ExpectWord("true"); return true;
                    case 'f': ExpectWord("false"); return false;
                    case 'n': ExpectWord("null"); return null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return ReadNumber();
                        throw Error("Unexpected character '" + c + "'");
                }
            }

            private void ExpectWord(string word)
            {
                if (string.CompareOrdinal(_text, _pos, word, 0, word.Length) != 0) throw Error("Expected '" + word + "'");
                _pos += word.Length;
            }

            private Dictionary<string, object> ReadObject(int depth)
            {
                var result = new Dictionary<string, object>();
                _pos++; // '{'
                SkipWhitespace();
                if (!AtEnd && _text[_pos] == '}') { _pos++; return result; }
                while (true)
                {
                    SkipWhitespace();
                    if (AtEnd || _text[_pos] != '"') throw Error("Expected a string key");
                    string key = ReadString();
                    SkipWhitespace();
                    if (AtEnd || _text[_pos] != ':') throw Error("Expected ':'");
                    _pos++;
                    SkipWhitespace();
                    result[key] = ReadValue(depth + 1);
                    SkipWhitespace();
                    if (AtEnd) throw Error("Unterminated object");
                    char c = _text[_pos++];
                    if (c == '}') return result;
                    if (c != ',') { _pos--; throw Error("Expected ',' or '}'"); }
                }
            }

            private List<object> ReadArray(int depth)
            {
                var result = new List<object>();
                _pos++; // '['
                SkipWhitespace();
                if (!AtEnd && _text[_pos] == ']') { _pos++; return result; }
                while (true)
                {
                    SkipWhitespace();
                    result.Add(ReadValue(depth + 1));
                    SkipWhitespace();
                    if (AtEnd) throw Error("Unterminated array");
                    char c = _text[_pos++];
                    if (c == ']') return result;
                    if (c != ',') { _pos--; throw Error("Expected ',' or ']'"); }
                }
            }

            private string ReadString()
            {
                _pos++; // opening quote
                var sb = new StringBuilder();
                while (true)
                {
                    int run = _pos;
                    while (_pos < _text.Length && _text[_pos] != '"' && _text[_pos] != '\\' && _text[_pos] >= 0x20) _pos++;
                    if (_pos > run) sb.Append(_text, run, _pos - run);
                    if (AtEnd) throw Error("Unterminated string");
                    char c = _text[_pos++];
                    if (c == '"') return sb.ToString();
                    if (c < 0x20) { _pos--; throw Error("Control character in string"); }
                    if (c != '\\') { sb.Append(c); continue; }
                    if (AtEnd) throw Error("Unterminated escape");
                    char e = _text[_pos++];
                    switch (e)
                    {
                        case '"': sb.Append('"'); break;
                        case '\\': sb.Append('\\'); break;
                        case '/': sb.Append('/'); break;
                        case 'b': sb.Append('\b'); break;
                        case 'f': sb.Append('\f'); break;
                        case 'n': sb.Append('\n'); break;
                        case 'r': sb.Append('\r'); break;
                        case 't': sb.Append('\t'); break;
                        case 'u':
                            if (_pos + 4 > _text.Length) throw Error("Truncated \\u escape");
                            int code;
                            if (!int.TryParse(_text.Substring(_pos, 4), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out code))
                                throw Error("Bad \\u escape");
                            sb.Append((char)code);
                            _pos += 4;
                            break;
                        default:
                            _pos--;
                            throw Error("Unknown escape '\\" + e + "'");
                    }
                }
            }

            private object ReadNumber()
            {
                int start = _pos;
                bool isFloat = false;
                while (!AtEnd)
                {
                    char c = _text[_pos];
                    if (c >= '0' && c <= '9') { _pos++; continue; }
                    if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { isFloat |= c != '-' || _pos != start; _pos++; continue; }
                    break;
                }
                int digitsStart = _text[start] == '-' ? start + 1 : start;
                bool leadingZero = _pos - digitsStart > 1 && _text[digitsStart] == '0';
                if (!isFloat && !leadingZero)
                {
                    long whole;
                    if (long.TryParse(_text.Substring(start, _pos - start), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out whole))
                        return whole;
                }
                // Integers beyond 64 bits become the nearest double, as in most JSON readers.
                double number;
                string problem = JsonNumbers.TryParse(_text, start, _pos, out number);
                if (problem == null) return number;
                string token = _text.Substring(start, Math.Min(_pos - start, 40));
                _pos = start;
                throw Error("Bad number '" + token + "': " + problem);
            }
        }
    }
}
