// The files a client reads to find and wait for the bridge: connection.json and status.json.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Security.Cryptography;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>Editor states written to status.json; clients wait while compiling or reloading.</summary>
    public static class EditorStates
    {
        public const string Starting = "starting";
        public const string Ready = "ready";
        public const string Compiling = "compiling";
        public const string Reloading = "reloading";
        public const string Playing = "playing";
        public const string Stopped = "stopped";

        /// <summary>States in which commands are answered with a retryable editor_busy error.</summary>
        public static bool IsBusy(string state) => state == Compiling || state == Reloading;
    }

    /// <summary>Reports what the editor is doing right now (the bridge refuses work while it is busy).</summary>
    public interface IEditorState
    {
        string Current { get; }
    }

    /// <summary>A state that the host sets by hand (the console host, or Unity's event callbacks).</summary>
    public sealed class SettableEditorState : IEditorState
    {
        private volatile string _current = EditorStates.Ready;
        public string Current { get => _current; set => _current = value; }
    }

    /// <summary>The bridge's folder (Library/AgentSdkBridge in a Unity project): connection, status and journal.</summary>
    public sealed class BridgeFiles
    {
        public string Directory { get; }
        public string ConnectionPath => Path.Combine(Directory, "connection.json");
        public string StatusPath => Path.Combine(Directory, "status.json");
        public string JournalDirectory => Path.Combine(Directory, "journal");

        public BridgeFiles(string directory)
        {
            Directory = directory;
            System.IO.Directory.CreateDirectory(directory);
        }

        /// <summary>Reads the token kept across domain reloads, creating a random one the first time.</summary>
        public string LoadOrCreateToken()
        {
            try
            {
                if (File.Exists(ConnectionPath))
                {
                    var existing = Json.Parse(File.ReadAllText(ConnectionPath, BridgeProtocol.Utf8)) as Dictionary<string, object>;
                    object token;
                    if (existing != null && existing.TryGetValue("token", out token) && token is string s && s.Length >= 32) return s;
                }
            }
            catch (JsonParseException) { }
            catch (IOException) { }
            return NewToken();
        }

        /// <summary>32 random bytes as hex.</summary>
        public static string NewToken()
        {
            var bytes = new byte[32];
            using (var rng = RandomNumberGenerator.Create()) rng.GetBytes(bytes);
            return BitConverter.ToString(bytes).Replace("-", "").ToLowerInvariant();
        }

        /// <summary>Writes where to connect. The token is a secret: the folder must stay out of version control.</summary>
        public void WriteConnection(int port, string token)
        {
            var doc = new Dictionary<string, object>
            {
                { "host", "127.0.0.1" },
                { "port", port },
                { "token", token },
                { "protocol", BridgeProtocol.Version },
                { "pid", Process.GetCurrentProcess().Id },
            };
            AtomicFile.WriteAllText(ConnectionPath, Json.Serialize(doc));
        }

        /// <summary>Writes the editor state with a timestamp so a client can tell a stale file.</summary>
        public void WriteStatus(string state, string detail = null)
        {
            var doc = new Dictionary<string, object>
            {
                { "state", state },
                { "pid", Process.GetCurrentProcess().Id },
                { "updated_unix", DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() / 1000.0 },
            };
            if (detail != null) doc["detail"] = detail;
            try { AtomicFile.WriteAllText(StatusPath, Json.Serialize(doc)); }
            catch (IOException) { }
            catch (UnauthorizedAccessException) { }
        }
    }
}
