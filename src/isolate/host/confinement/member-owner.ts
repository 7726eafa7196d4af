/** The host uid and gid a confined member runs as (when the host runs as root). */
export interface MemberOwner {
  uid: number;
  gid: number;
}
