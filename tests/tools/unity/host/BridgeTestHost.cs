// A console host for the engine-independent bridge core, run under mono by the tests.
// It writes connection.json/status.json like the editor does and serves a few test commands.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using AgentSdk.Unity.Bridge;

namespace AgentSdk.Unity.Bridge.TestHost
{
    public static class Program
    {
        private static readonly object Gate = new object();
        private static readonly Dictionary<string, int> Invocations = new Dictionary<string, int>();
        private static BridgeServer _server;
        private static BridgeFiles _files;
        private static BridgeOptions _options;
        private static CommandRegistry _registry;
        private static readonly SettableEditorState State = new SettableEditorState();
        private static double _reloadSeconds;

        public static int Main(string[] argv)
        {
            string dir = Arg(argv, "--dir", null);
            if (dir == null) { Console.Error.WriteLine("usage: host.exe --dir DIR [--port N] [--max-frame-bytes N]"); return 2; }
            _files = new BridgeFiles(dir);
            _options = new BridgeOptions
            {
                Port = int.Parse(Arg(argv, "--port", "0")),
                Token = _files.LoadOrCreateToken(),
                MaxFrameBytes = long.Parse(Arg(argv, "--max-frame-bytes", BridgeProtocol.DefaultMaxFrameBytes.ToString())),
                ServerName = "agentsdk-unity-test-host",
                HandshakeTimeoutMs = int.Parse(Arg(argv, "--handshake-timeout-ms", "5000")),
                MaxConnections = int.Parse(Arg(argv, "--max-connections", "32")),
            };
            _registry = new CommandRegistry();
            RegisterTestCommands(_registry);
            StartServer();
            Console.Out.WriteLine("LISTENING " + _server.Port);
            Console.Out.Flush();
            // The host lives exactly as long as its stdin: when the test (or its process) goes, so does the host.
            Console.In.ReadToEnd();
            _server.Stop();
            _files.WriteStatus(EditorStates.Stopped);
            // Exit now rather than wait for thread-pool work (e.g. a 'slow' command) to wind down.
            Environment.Exit(0);
            return 0;
        }

        private static void StartServer()
        {
            var journal = new ResultJournal(_files.JournalDirectory);
            journal.WriteFailed += (id, e) => Console.Error.WriteLine("journal: " + id + " not on disk: " + e.Message);
            _server = new BridgeServer(_options, _registry, journal, State);
            _server.Log += message => Console.Error.WriteLine("bridge: " + message);
            _server.ResponseJournaled += OnJournaled;
            _server.Start();
            _options.Port = _server.Port;
            _files.WriteConnection(_server.Port, _options.Token);
            State.Current = EditorStates.Ready;
            _files.WriteStatus(EditorStates.Ready);
        }

        // Simulates a domain reload right after a response reached the journal and before it was sent.
        private static void OnJournaled(string id, string command)
        {
            if (command != "host.reload_after") return;
            State.Current = EditorStates.Reloading;
            _files.WriteStatus(EditorStates.Reloading);
            _server.Stop();
            Thread.Sleep(TimeSpan.FromSeconds(_reloadSeconds));
            StartServer(); // a fresh journal instance: the response must come back from disk
        }

        private static void Count(string name)
        {
            lock (Gate) { int n; Invocations.TryGetValue(name, out n); Invocations[name] = n + 1; }
        }

        private static void RegisterTestCommands(CommandRegistry registry)
        {
            registry.AddSync("echo", args => { Count("echo"); return args.Raw; });
            registry.Add("slow", async (args, token) =>
            {
                Count("slow");
                double seconds = args.GetNumber("seconds", 1.0);
                await Task.Delay(TimeSpan.FromSeconds(seconds)).ConfigureAwait(false);
                return new Dictionary<string, object> { { "slept", seconds }, { "tag", args.GetString("tag", "") } };
            });
            registry.AddSync("large", args =>
            {
                Count("large");
                int size = (int)args.GetInteger("bytes");
                var chars = new char[size];
                for (int i = 0; i < size; i++) chars[i] = (char)('a' + i % 26);
                return new Dictionary<string, object> { { "data", new string(chars) } };
            });
            registry.AddSync("fail", args =>
            {
                Count("fail");
                throw new BridgeException(args.GetString("code"), args.GetString("message", "requested failure"), args.GetBool("retryable", false));
            });
            // Builds a string from UTF-16 code units, unpaired surrogates included (editor data can hold them).
            registry.AddSync("text", args =>
            {
                Count("text");
                var units = (List<object>)args.GetValue("units");
                return new Dictionary<string, object> { { "text", new string(units.Select(u => (char)(long)u).ToArray()) } };
            });
            // The IEEE bits of the doubles the bridge parsed, so a test can check the parse itself.
            registry.AddSync("host.bits", args =>
            {
                var values = (List<object>)args.GetValue("values");
                var result = values.Select(v => (object)BitConverter.DoubleToInt64Bits(v is long l ? l : (double)v)).ToList();
                return new Dictionary<string, object> { { "bits", result } };
            }, requiresIdleEditor: false);
            registry.AddSync("crash", args => { throw new InvalidOperationException("handler bug"); });
            registry.AddSync("host.counts", args =>
            {
                lock (Gate) return Invocations.ToDictionary(p => p.Key, p => (object)p.Value);
            }, requiresIdleEditor: false);
            registry.AddSync("host.busy", args =>
            {
                double seconds = args.GetNumber("seconds");
                State.Current = EditorStates.Compiling;
                _files.WriteStatus(EditorStates.Compiling);
                Task.Delay(TimeSpan.FromSeconds(seconds)).ContinueWith(_ =>
                {
                    State.Current = EditorStates.Ready;
                    _files.WriteStatus(EditorStates.Ready);
                });
                return new Dictionary<string, object> { { "state", EditorStates.Compiling } };
            }, requiresIdleEditor: false);
            registry.AddSync("host.reload_after", args =>
            {
                Count("host.reload_after");
                _reloadSeconds = args.GetNumber("seconds", 1.0);
                return new Dictionary<string, object> { { "value", args.GetValue("value") } };
            });
        }

        private static string Arg(string[] argv, string name, string fallback)
        {
            int i = Array.IndexOf(argv, name);
            return i >= 0 && i + 1 < argv.Length ? argv[i + 1] : fallback;
        }
    }
}
