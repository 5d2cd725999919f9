// Wire protocol of the agentsdk Unity bridge: errors, arguments and length-prefixed frames.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>Constants shared by the server and every client.</summary>
    public static class BridgeProtocol
    {
        /// <summary>Version a client must ask for in its hello line.</summary>
        public const int Version = 1;

        /// <summary>Longest hello line accepted before the connection is dropped.</summary>
        public const int MaxHelloBytes = 4096;

        /// <summary>Default cap on one frame's payload.</summary>
        public const long DefaultMaxFrameBytes = 64L * 1024 * 1024;

        /// <summary>Strict UTF-8: invalid bytes in a frame are a malformed frame, not replacement characters.</summary>
        public static readonly UTF8Encoding Utf8 = new UTF8Encoding(false, true);
    }

    /// <summary>Stable error codes a client can branch on.</summary>
    public static class ErrorCodes
    {
        public const string AuthFailed = "auth_failed";
        public const string BadHandshake = "bad_handshake";
        public const string ProtocolMismatch = "protocol_mismatch";
        public const string TooManyConnections = "too_many_connections";
        public const string MalformedFrame = "malformed_frame";
        public const string FrameTooLarge = "frame_too_large";
        public const string BadRequest = "bad_request";
        public const string UnknownCommand = "unknown_command";
        public const string InvalidArgs = "invalid_args";
        public const string NotFound = "not_found";
        public const string PreconditionFailed = "precondition_failed";
        public const string EditorBusy = "editor_busy";
        public const string Timeout = "timeout";
        public const string Internal = "internal_error";
    }

    /// <summary>A typed failure sent back as {code, message, retryable}.</summary>
    public class BridgeException : Exception
    {
        public string Code { get; }
        public bool Retryable { get; }

        public BridgeException(string code, string message, bool retryable = false) : base(message)
        {
            Code = code;
            Retryable = retryable;
        }

        /// <summary>The error object placed in a response.</summary>
        public Dictionary<string, object> ToJson()
        {
            return ErrorJson(Code, Message, Retryable);
        }

        public static Dictionary<string, object> ErrorJson(string code, string message, bool retryable)
        {
            return new Dictionary<string, object> { { "code", code }, { "message", message }, { "retryable", retryable } };
        }
    }

    /// <summary>Typed access to a request's "args" object; missing or mistyped values raise invalid_args.</summary>
    public sealed class CommandArgs
    {
        private readonly Dictionary<string, object> _values;

        public CommandArgs(Dictionary<string, object> values)
        {
            _values = values ?? new Dictionary<string, object>();
        }

        /// <summary>The raw argument dictionary.</summary>
        public Dictionary<string, object> Raw => _values;

        public bool Has(string name) => _values.ContainsKey(name) && _values[name] != null;

        public string GetString(string name)
        {
            object value = Require(name);
            if (value is string s) return s;
            throw Invalid(name, "a string");
        }

        public string GetString(string name, string fallback) => Has(name) ? GetString(name) : fallback;

        public double GetNumber(string name)
        {
            object value = Require(name);
            if (value is long l) return l;
            if (value is double d) return d;
            throw Invalid(name, "a number");
        }

        public double GetNumber(string name, double fallback) => Has(name) ? GetNumber(name) : fallback;

        public long GetInteger(string name)
        {
            object value = Require(name);
            if (value is long l) return l;
            // 2^63 itself is a double that no long holds: the bound is exclusive.
            if (value is double d && Math.Floor(d) == d && d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (long)d;
            throw Invalid(name, "an integer");
        }

        public long GetInteger(string name, long fallback) => Has(name) ? GetInteger(name) : fallback;

        /// <summary>An integer in [min, max]; out of range is invalid_args, never a silently wrapped value.</summary>
        public int GetInt32(string name, int fallback, int min, int max)
        {
            long value = GetInteger(name, fallback);
            if (value < min || value > max)
                throw new BridgeException(ErrorCodes.InvalidArgs, string.Format(CultureInfo.InvariantCulture,
                    "Argument '{0}' must be between {1} and {2} (got {3})", name, min, max, value));
            return (int)value;
        }

        public bool GetBool(string name, bool fallback)
        {
            if (!Has(name)) return fallback;
            if (_values[name] is bool b) return b;
            throw Invalid(name, "a boolean");
        }

        public object GetValue(string name) => Require(name);

        public Dictionary<string, object> GetObject(string name)
        {
            object value = Require(name);
            if (value is Dictionary<string, object> d) return d;
            throw Invalid(name, "an object");
        }

        /// <summary>Reads [x, y, z] or {"x":..,"y":..,"z":..} into three doubles.</summary>
        public double[] GetVector3(string name)
        {
            object value = Require(name);
            var result = new double[3];
            if (value is List<object> list && list.Count == 3)
            {
                for (int i = 0; i < 3; i++) result[i] = ToDouble(list[i], name);
                return result;
            }
            if (value is Dictionary<string, object> dict && dict.ContainsKey("x") && dict.ContainsKey("y") && dict.ContainsKey("z"))
            {
                result[0] = ToDouble(dict["x"], name);
                result[1] = ToDouble(dict["y"], name);
                result[2] = ToDouble(dict["z"], name);
                return result;
            }
            throw Invalid(name, "a vector [x, y, z]");
        }

        private double ToDouble(object value, string name)
        {
            if (value is long l) return l;
            if (value is double d) return d;
            throw Invalid(name, "numbers");
        }

        private object Require(string name)
        {
            object value;
            if (!_values.TryGetValue(name, out value) || value == null)
                throw new BridgeException(ErrorCodes.InvalidArgs, "Missing argument '" + name + "'");
            return value;
        }

        private static BridgeException Invalid(string name, string expected)
        {
            return new BridgeException(ErrorCodes.InvalidArgs, "Argument '" + name + "' must be " + expected);
        }
    }

    /// <summary>Raised when a peer announces a frame larger than the cap; the stream cannot be resynchronised.</summary>
    public sealed class FrameTooLargeException : Exception
    {
        public long Size { get; }

        public FrameTooLargeException(long size, long limit)
            : base(string.Format(CultureInfo.InvariantCulture, "Frame of {0} bytes exceeds the limit of {1} bytes", size, limit))
        {
            Size = size;
        }
    }

    /// <summary>8-byte big-endian length prefix followed by that many bytes of UTF-8 JSON.</summary>
    public static class FrameCodec
    {
        /// <summary>Reads one frame; returns null on a clean end of stream before a header.</summary>
        public static async Task<byte[]> ReadFrameAsync(Stream stream, long maxBytes, CancellationToken token)
        {
            var header = new byte[8];
            int got = await ReadFullyAsync(stream, header, 8, token).ConfigureAwait(false);
            if (got == 0) return null;
            if (got < 8) throw new EndOfStreamException("Connection closed inside a frame header");
            ulong length = 0;
            for (int i = 0; i < 8; i++) length = (length << 8) | header[i];
            if (length > (ulong)maxBytes) throw new FrameTooLargeException(length > long.MaxValue ? long.MaxValue : (long)length, maxBytes);
            var payload = new byte[(int)length];
            got = await ReadFullyAsync(stream, payload, payload.Length, token).ConfigureAwait(false);
            if (got < payload.Length) throw new EndOfStreamException("Connection closed inside a frame");
            return payload;
        }

        /// <summary>Builds header + payload as one buffer so one write sends a whole frame.</summary>
        public static byte[] Encode(byte[] payload)
        {
            var buffer = new byte[8 + payload.Length];
            ulong length = (ulong)payload.Length;
            for (int i = 7; i >= 0; i--) { buffer[i] = (byte)(length & 0xff); length >>= 8; }
            Buffer.BlockCopy(payload, 0, buffer, 8, payload.Length);
            return buffer;
        }

        private static async Task<int> ReadFullyAsync(Stream stream, byte[] buffer, int count, CancellationToken token)
        {
            int total = 0;
            while (total < count)
            {
                int n = await stream.ReadAsync(buffer, total, count - total, token).ConfigureAwait(false);
                if (n == 0) break;
                total += n;
            }
            return total;
        }
    }
}
