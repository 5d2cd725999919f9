// The bridge server: loopback TCP, token hello line, framed JSON requests answered concurrently.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>Settings of one bridge server.</summary>
    public sealed class BridgeOptions
    {
        /// <summary>Port on 127.0.0.1; 0 picks a free one.</summary>
        public int Port { get; set; }
        public string Token { get; set; }
        public long MaxFrameBytes { get; set; } = BridgeProtocol.DefaultMaxFrameBytes;
        public int HandshakeTimeoutMs { get; set; } = 5000;
        public string ServerName { get; set; } = "agentsdk-unity-bridge";

        /// <summary>Authenticated clients served at once; one more gets a too_many_connections error.</summary>
        public int MaxConnections { get; set; } = 32;

        /// <summary>Connections still saying hello; past this the oldest is dropped, so idle sockets never lock a client out.</summary>
        public int MaxPendingHandshakes { get; set; } = 64;
    }

    /// <summary>Serves commands to authenticated loopback clients. Only listens on 127.0.0.1.</summary>
    public sealed class BridgeServer : IDisposable
    {
        private readonly BridgeOptions _options;
        private readonly CommandRegistry _registry;
        private readonly ResultJournal _journal;
        private readonly IEditorState _state;
        private readonly string _session = Guid.NewGuid().ToString("N");
        private readonly object _gate = new object();
        private readonly HashSet<TcpClient> _clients = new HashSet<TcpClient>();
        // Oldest first: a flood of silent sockets pushes out its own oldest members, not the real client.
        private readonly LinkedList<TcpClient> _pending = new LinkedList<TcpClient>();
        private readonly CancellationTokenSource _stop = new CancellationTokenSource();
        private TcpListener _listener;

        /// <summary>Raised after a response is in the journal and before it is sent (a reload here loses only the send).</summary>
        public event Action<string, string> ResponseJournaled;

        /// <summary>Raised for connection-level problems worth logging (never contains the token).</summary>
        public event Action<string> Log;

        public int Port { get; private set; }

        public BridgeServer(BridgeOptions options, CommandRegistry registry, ResultJournal journal, IEditorState state)
        {
            if (string.IsNullOrEmpty(options.Token)) throw new ArgumentException("A bridge needs a token", nameof(options));
            _options = options;
            _registry = registry;
            _journal = journal;
            _state = state;
        }

        public void Start()
        {
            _listener = new TcpListener(IPAddress.Loopback, _options.Port);
            _listener.Start();
            Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
            Task.Run(AcceptLoopAsync);
        }

        /// <summary>Closes the listener and every connection. Commands in flight still finish into the journal.</summary>
        public void Stop()
        {
            if (_stop.IsCancellationRequested) return;
            _stop.Cancel();
            try { _listener?.Stop(); } catch (SocketException) { }
            lock (_gate)
            {
                foreach (TcpClient client in _clients) client.Close();
                foreach (TcpClient client in _pending) client.Close();
                _clients.Clear();
                _pending.Clear();
            }
        }

        public void Dispose() => Stop();

        private async Task AcceptLoopAsync()
        {
            while (!_stop.IsCancellationRequested)
            {
                TcpClient client;
                try { client = await _listener.AcceptTcpClientAsync().ConfigureAwait(false); }
                catch (ObjectDisposedException) { return; }
                catch (SocketException) { if (_stop.IsCancellationRequested) return; continue; }
                catch (InvalidOperationException) { return; }
                // Nobody is refused before saying hello: the limit applies to authenticated clients only.
                TcpClient evicted = null;
                LinkedListNode<TcpClient> node;
                lock (_gate)
                {
                    if (_stop.IsCancellationRequested) { client.Close(); return; }
                    node = _pending.AddLast(client);
                    if (_pending.Count > Math.Max(1, _options.MaxPendingHandshakes))
                    {
                        evicted = _pending.First.Value;
                        _pending.RemoveFirst();
                    }
                }
                if (evicted != null)
                {
                    Log?.Invoke("dropped a connection that had not said hello (too many waiting)");
                    evicted.Close();
                }
                Forget(Task.Run(() => ServeClientAsync(client, node)));
            }
        }

        private async Task ServeClientAsync(TcpClient client, LinkedListNode<TcpClient> pendingNode)
        {
            try
            {
                client.NoDelay = true;
                NetworkStream stream = client.GetStream();
                var connection = new Connection(stream);
                if (!await HandshakeAsync(client, connection, pendingNode).ConfigureAwait(false)) return;
                await ReadRequestsAsync(connection).ConfigureAwait(false);
            }
            catch (IOException) { }
            catch (ObjectDisposedException) { }
            catch (SocketException) { }
            catch (Exception e) { Log?.Invoke("connection failed: " + e.GetType().Name + ": " + e.Message); }
            finally
            {
                lock (_gate)
                {
                    _clients.Remove(client);
                    if (pendingNode.List != null) _pending.Remove(pendingNode);
                }
                client.Close();
            }
        }

        private async Task<bool> HandshakeAsync(TcpClient client, Connection connection, LinkedListNode<TcpClient> pendingNode)
        {
            Task<string> read = ReadLineAsync(connection.Stream, BridgeProtocol.MaxHelloBytes);
            // Mono's NetworkStream ignores cancellation tokens, so a stalled hello is ended by closing the socket.
            if (await Task.WhenAny(read, Task.Delay(_options.HandshakeTimeoutMs)).ConfigureAwait(false) != read)
            {
                client.Close();
                return false;
            }
            string line = await read.ConfigureAwait(false);
            if (line == null)
            {
                await connection.SendLineAsync(ErrorLine(ErrorCodes.BadHandshake, "Expected a hello line of at most " + BridgeProtocol.MaxHelloBytes + " bytes")).ConfigureAwait(false);
                return false;
            }
            Dictionary<string, object> hello;
            try { hello = Json.Parse(line) as Dictionary<string, object>; }
            catch (JsonParseException) { hello = null; }
            if (hello == null)
            {
                await connection.SendLineAsync(ErrorLine(ErrorCodes.BadHandshake, "The hello line must be a JSON object")).ConfigureAwait(false);
                return false;
            }
            object token;
            hello.TryGetValue("token", out token);
            if (!(token is string given) || !ConstantTimeEquals(given, _options.Token))
            {
                Log?.Invoke("refused a client with a wrong token");
                await connection.SendLineAsync(ErrorLine(ErrorCodes.AuthFailed, "Wrong or missing token")).ConfigureAwait(false);
                return false;
            }
            object protocol;
            hello.TryGetValue("protocol", out protocol);
            if (!(protocol is long version) || version != BridgeProtocol.Version)
            {
                await connection.SendLineAsync(ErrorLine(ErrorCodes.ProtocolMismatch, "This bridge speaks protocol " + BridgeProtocol.Version)).ConfigureAwait(false);
                return false;
            }
            bool admitted;
            int serving;
            lock (_gate)
            {
                // An evicted or stopped connection is no longer pending: it must not be admitted.
                bool stillPending = pendingNode.List != null;
                if (stillPending) _pending.Remove(pendingNode);
                serving = _clients.Count;
                admitted = stillPending && serving < _options.MaxConnections;
                if (admitted) _clients.Add(client);
            }
            if (!admitted)
            {
                if (serving >= _options.MaxConnections)
                {
                    Log?.Invoke("refused a client: " + serving + " clients connected");
                    await connection.SendLineAsync(ErrorLine(ErrorCodes.TooManyConnections,
                        "The bridge already serves " + serving + " clients (its limit is " + _options.MaxConnections
                        + "); close another client or wait for one to disconnect")).ConfigureAwait(false);
                }
                return false;
            }
            var capabilities = new List<object> { "journal", "status" };
            foreach (string name in _registry.Names) capabilities.Add(name);
            var welcome = new Dictionary<string, object>
            {
                { "type", "welcome" },
                { "protocol", BridgeProtocol.Version },
                { "server", _options.ServerName },
                { "session", _session },
                { "state", _state.Current },
                { "max_frame_bytes", _options.MaxFrameBytes },
                { "capabilities", capabilities },
            };
            await connection.SendLineAsync(Json.Serialize(welcome)).ConfigureAwait(false);
            return true;
        }

        private async Task ReadRequestsAsync(Connection connection)
        {
            while (!_stop.IsCancellationRequested)
            {
                byte[] payload;
                try
                {
                    payload = await FrameCodec.ReadFrameAsync(connection.Stream, _options.MaxFrameBytes, CancellationToken.None).ConfigureAwait(false);
                }
                catch (FrameTooLargeException e)
                {
                    // The rest of the stream cannot be framed any more: say why, then close this connection only.
                    await connection.SendFrameAsync(Failure(null, ErrorCodes.FrameTooLarge, e.Message, false)).ConfigureAwait(false);
                    return;
                }
                catch (EndOfStreamException) { return; }
                if (payload == null) return;

                string text;
                try { text = BridgeProtocol.Utf8.GetString(payload); }
                catch (DecoderFallbackException) { text = null; }
                Dictionary<string, object> request = null;
                string problem = "A frame must hold a UTF-8 JSON object";
                if (text != null)
                {
                    try { request = Json.Parse(text) as Dictionary<string, object>; }
                    catch (JsonParseException e) { problem += ": " + e.Message; Log?.Invoke("malformed frame: " + e.Message); }
                }
                if (request == null)
                {
                    // Answer under the request's id when it can still be read, so its sender is not left waiting.
                    string id = text == null ? null : Json.TryReadTopLevelString(text, "id");
                    await connection.SendFrameAsync(Failure(ResultJournal.IsValidId(id) ? id : null, ErrorCodes.MalformedFrame, problem, false)).ConfigureAwait(false);
                    continue;
                }
                Forget(Task.Run(() => HandleRequestAsync(request, connection)));
            }
        }

        private async Task HandleRequestAsync(Dictionary<string, object> request, Connection connection)
        {
            object idValue, commandValue, argsValue;
            request.TryGetValue("id", out idValue);
            request.TryGetValue("command", out commandValue);
            request.TryGetValue("args", out argsValue);
            string id = idValue as string;
            string command = commandValue as string;
            string replyId = ResultJournal.IsValidId(id) ? id : null;
            string response;
            try { response = await AnswerAsync(replyId, command, argsValue).ConfigureAwait(false); }
            catch (Exception e)
            {
                // Whatever went wrong, the sender gets an answer instead of waiting for its timeout.
                Log?.Invoke("request " + replyId + " failed: " + e.GetType().Name + ": " + e.Message);
                response = Failure(replyId, ErrorCodes.Internal, e.GetType().Name + ": " + e.Message, false);
            }
            await connection.SendFrameAsync(response).ConfigureAwait(false);
        }

        private async Task<string> AnswerAsync(string id, string command, object argsValue)
        {
            if (id == null || string.IsNullOrEmpty(command) || (argsValue != null && !(argsValue is Dictionary<string, object>)))
            {
                return Failure(id, ErrorCodes.BadRequest,
                    "A request is {\"id\": [A-Za-z0-9_.-]{1,128}, \"command\": string, \"args\": object}", false);
            }
            string broken = Json.FindUnpairedSurrogate(argsValue, "args");
            if (broken != null)
            {
                // Refused before it runs: Unity would store a mangled name or file, and nothing is lost by asking again.
                return Failure(id, ErrorCodes.InvalidArgs,
                    broken + " holds half of a UTF-16 surrogate pair (an unpaired \\uD800-\\uDFFF escape); send whole characters", false);
            }
            var args = new CommandArgs(argsValue as Dictionary<string, object>);
            if (command == "bridge.result")
            {
                try { return JournalLookup(id, args); }
                catch (BridgeException e) { return Failure(id, e.Code, e.Message, false); }
            }
            if (command == "bridge.ping") return Success(id, new Dictionary<string, object> { { "state", _state.Current }, { "session", _session } });
            return await RunOnceAsync(id, command, args).ConfigureAwait(false);
        }

        /// <summary>Runs a command at most once per id; a repeated id gets the journaled (or in-flight) response.</summary>
        private async Task<string> RunOnceAsync(string id, string command, CommandArgs args)
        {
            Task<string> earlier = _journal.Begin(id);
            if (earlier != null) return await earlier.ConfigureAwait(false);
            Outcome outcome;
            try { outcome = await ExecuteAsync(id, command, args).ConfigureAwait(false); }
            catch (Exception e)
            {
                // Never leave a claimed id pending: later requests with it would wait forever.
                string failed = Failure(id, ErrorCodes.Internal, e.GetType().Name + ": " + e.Message, false);
                _journal.Abandon(id, failed);
                return failed;
            }
            string response = outcome.Json;
            if (outcome.Retryable)
            {
                // Not journaled: a retry under the same id must run the command again.
                _journal.Abandon(id, response);
                return response;
            }
            _journal.Complete(id, response);
            try { ResponseJournaled?.Invoke(id, command); }
            catch (Exception e) { Log?.Invoke("ResponseJournaled handler failed: " + e.Message); }
            return response;
        }

        private struct Outcome
        {
            public string Json;
            public bool Retryable;

            public Outcome(string json, bool retryable) { Json = json; Retryable = retryable; }
        }

        private async Task<Outcome> ExecuteAsync(string id, string command, CommandArgs args)
        {
            CommandInfo info;
            if (!_registry.TryGet(command, out info))
                return new Outcome(Failure(id, ErrorCodes.UnknownCommand, "Unknown command '" + command + "'", false), false);
            string state = _state.Current;
            if (info.RequiresIdleEditor && EditorStates.IsBusy(state))
                return new Outcome(Failure(id, ErrorCodes.EditorBusy, "The editor is " + state + "; retry shortly", true), true);
            try
            {
                object result = await Task.Run(() => info.Handler(args, _stop.Token)).ConfigureAwait(false);
                return new Outcome(Success(id, result), false);
            }
            catch (BridgeException e) { return new Outcome(Failure(id, e.Code, e.Message, e.Retryable), e.Retryable); }
            catch (Exception e) { return new Outcome(Failure(id, ErrorCodes.Internal, e.GetType().Name + ": " + e.Message, false), false); }
        }

        private string JournalLookup(string id, CommandArgs args)
        {
            string target = args.Has("request_id") ? args.GetString("request_id") : null;
            if (!ResultJournal.IsValidId(target)) return Failure(id, ErrorCodes.InvalidArgs, "bridge.result needs a valid 'request_id'", false);
            JournalState state = _journal.StateOf(target);
            string stateName = state == JournalState.Done ? "done" : state == JournalState.Pending ? "pending" : "unknown";
            var sb = new StringBuilder();
            sb.Append("{\"id\":").Append(Json.Serialize(id)).Append(",\"ok\":true,\"result\":{\"request_id\":")
              .Append(Json.Serialize(target)).Append(",\"state\":\"").Append(stateName).Append('"');
            string stored = state == JournalState.Done ? _journal.GetResponse(target) : null;
            // The stored response is already JSON: splice it in rather than parse and re-serialize a large payload.
            if (stored != null) sb.Append(",\"response\":").Append(stored);
            sb.Append("}}");
            return sb.ToString();
        }

        /// <summary>Background tasks report their faults to Log instead of vanishing.</summary>
        private void Forget(Task task)
        {
            task.ContinueWith(t => Log?.Invoke("background task failed: " + t.Exception?.GetBaseException().Message),
                TaskContinuationOptions.OnlyOnFaulted);
        }

        private static string Success(string id, object result)
        {
            return Json.Serialize(new Dictionary<string, object> { { "id", id }, { "ok", true }, { "result", result } });
        }

        private static string Failure(string id, string code, string message, bool retryable)
        {
            return Json.Serialize(new Dictionary<string, object>
            {
                { "id", id }, { "ok", false }, { "error", BridgeException.ErrorJson(code, message, retryable) },
            });
        }

        private static string ErrorLine(string code, string message)
        {
            return Json.Serialize(new Dictionary<string, object> { { "type", "error" }, { "error", BridgeException.ErrorJson(code, message, false) } });
        }

        private static bool ConstantTimeEquals(string a, string b)
        {
            if (a.Length != b.Length) return false;
            int diff = 0;
            for (int i = 0; i < a.Length; i++) diff |= a[i] ^ b[i];
            return diff == 0;
        }

        /// <summary>Reads up to '\n' one byte at a time so no frame bytes after the hello are consumed.</summary>
        private static async Task<string> ReadLineAsync(Stream stream, int maxBytes)
        {
            var bytes = new List<byte>();
            var one = new byte[1];
            while (bytes.Count <= maxBytes)
            {
                int n = await stream.ReadAsync(one, 0, 1).ConfigureAwait(false);
                if (n == 0) return null;
                if (one[0] == (byte)'\n')
                {
                    try { return BridgeProtocol.Utf8.GetString(bytes.ToArray()).TrimEnd('\r'); }
                    catch (DecoderFallbackException) { return null; }
                }
                bytes.Add(one[0]);
            }
            return null;
        }

        /// <summary>One client's stream with a write lock so concurrent responses never interleave.</summary>
        private sealed class Connection
        {
            private readonly SemaphoreSlim _writeLock = new SemaphoreSlim(1, 1);
            public NetworkStream Stream { get; }

            public Connection(NetworkStream stream) { Stream = stream; }

            public Task SendLineAsync(string line) => WriteAsync(BridgeProtocol.Utf8.GetBytes(line + "\n"));

            public Task SendFrameAsync(string json) => WriteAsync(FrameCodec.Encode(BridgeProtocol.Utf8.GetBytes(json)));

            private async Task WriteAsync(byte[] data)
            {
                await _writeLock.WaitAsync().ConfigureAwait(false);
                try { await Stream.WriteAsync(data, 0, data.Length).ConfigureAwait(false); }
                catch (IOException) { /* the client went away; the journal still holds the response */ }
                catch (ObjectDisposedException) { }
                finally { _writeLock.Release(); }
            }
        }
    }
}
