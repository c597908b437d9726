import { useQuery } from "@connectrpc/connect-query";
import { AddressMode, GroupService } from "../gen/carillon/v1/group_pb";
import { useT } from "../i18n";
import { ErrorBox, Table, Time } from "../ui";

// Groups lists the executor groups with their live executors.
export function Groups() {
  const [t] = useT();
  const q = useQuery(GroupService.method.listGroups, {}, { refetchInterval: 10_000 });
  return (
    <section>
      <h1 className="mb-3 text-lg font-semibold">{t("nav.groups")}</h1>
      <ErrorBox error={q.error} />
      <Table head={["ID", t("groups.app"), t("groups.title"), t("groups.mode"), t("groups.executors"), ""]}>
        {q.data?.groups.map((g) => (
          <tr key={`${g.id}`}>
            <td className="px-3 py-2">{`${g.id}`}</td>
            <td className="px-3 py-2 font-mono">{g.appName}</td>
            <td className="px-3 py-2">{g.title}</td>
            <td className="px-3 py-2">{AddressMode[g.addressMode]}</td>
            <td className="px-3 py-2 font-mono text-xs" data-testid={`executors-${g.appName}`}>{g.addresses.join(", ") || "—"}</td>
            <td className="px-3 py-2 text-xs text-slate-500"><Time ts={g.updatedAt} /></td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
