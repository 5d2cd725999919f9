// console.logs: the editor's log messages, captured from any thread into a bounded buffer.
using System.Collections.Generic;
using System.Linq;
using UnityEngine;

namespace AgentSdk.Unity.Bridge.Editor
{
    /// <summary>Keeps the last messages logged in the editor, numbered so a client can ask for what is new.</summary>
    public sealed class ConsoleCommands : IBridgeCommandSet
    {
        private const int Capacity = 2000;
        private readonly object _lock = new object();
        private readonly LinkedList<Dictionary<string, object>> _entries = new LinkedList<Dictionary<string, object>>();
        private long _sequence;

        public void Attach() => Application.logMessageReceivedThreaded += OnLog;

        public void Detach() => Application.logMessageReceivedThreaded -= OnLog;

        private void OnLog(string condition, string stackTrace, LogType type)
        {
            lock (_lock)
            {
                _sequence++;
                _entries.AddLast(new Dictionary<string, object>
                {
                    { "seq", _sequence }, { "type", type.ToString() }, { "message", condition },
                    { "stack", type == LogType.Error || type == LogType.Exception || type == LogType.Assert ? stackTrace : "" },
                    { "unix", CompileLog.NowUnix() },
                });
                while (_entries.Count > Capacity) _entries.RemoveFirst();
            }
        }

        public void Register(CommandRegistry registry)
        {
            registry.AddSync("console.logs", args =>
            {
                long since = args.GetInteger("since", 0);
                int limit = args.GetInt32("limit", 100, 1, int.MaxValue);
                string type = args.GetString("type", null);
                lock (_lock)
                {
                    var picked = _entries.Where(e => (long)e["seq"] > since && (type == null || (string)e["type"] == type)).ToList();
                    var page = picked.Skip(System.Math.Max(0, picked.Count - limit)).Cast<object>().ToList();
                    return new Dictionary<string, object> { { "entries", page }, { "last_seq", _sequence } };
                }
            }, requiresIdleEditor: false);
        }
    }
}
